// A small line chart of segments per second, drawn as SVG (no library, no inline style).
import { svg } from "./dom.js";
import { decimal } from "./format.js";

const WIDTH = 420;
const HEIGHT = 90;
const WINDOW_MS = 5 * 60 * 1000;

/** A round top for the scale: 1, 2, 5, 10, 20, 50, ... */
function ceiling(value) {
  for (let power = 1; ; power *= 10) {
    for (const step of [1, 2, 5]) if (step * power >= value) return step * power;
  }
}

/** The chart of ``points`` ({at, value}) over the last five minutes up to ``now``. */
export function rateChart(points, now, label) {
  const top = ceiling(Math.max(1, ...points.map((p) => p.value)));
  const end = new Date(now).getTime();
  const x = (at) => WIDTH - ((end - new Date(at).getTime()) / WINDOW_MS) * WIDTH;
  const y = (value) => HEIGHT - (value / top) * (HEIGHT - 12);
  const recent = points.filter((p) => end - new Date(p.at).getTime() <= WINDOW_MS);
  const line = recent.map((p) => `${x(p.at).toFixed(1)},${y(p.value).toFixed(1)}`).join(" ");
  const latest = recent.length ? recent[recent.length - 1].value : 0;
  const peak = Math.max(0, ...recent.map((p) => p.value));
  const described = `${label}: now ${decimal(latest)}, peak ${decimal(peak)} over the last 5 minutes`;
  return svg(
    "svg",
    { viewBox: `0 0 ${WIDTH} ${HEIGHT + 14}`, role: "img", "aria-label": described, class: "chart" },
    svg("title", {}, described),
    svg("line", { x1: 0, y1: HEIGHT, x2: WIDTH, y2: HEIGHT, class: "axis" }),
    svg("line", { x1: 0, y1: 12, x2: WIDTH, y2: 12, class: "grid" }),
    svg("text", { x: 2, y: 10, class: "tick" }, `${decimal(top, 0)}/s`),
    svg("text", { x: 2, y: HEIGHT + 12, class: "tick" }, "5 min ago"),
    svg("text", { x: WIDTH - 2, y: HEIGHT + 12, class: "tick end" }, "now"),
    recent.length > 1 ? svg("polyline", { points: line, class: "rate" }) : svg("text", { x: WIDTH / 2, y: HEIGHT / 2, class: "tick middle" }, "collecting…"),
  );
}
