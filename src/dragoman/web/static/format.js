// How figures, times and languages read on the pages.
import { h } from "./dom.js";

const names = new Intl.DisplayNames(["en"], { type: "language" });
const numbers = new Intl.NumberFormat("en");
const FINISHED = new Set(["succeeded", "failed", "cancelled"]);

export function finished(job) {
  return FINISHED.has(job.status);
}

/** "French (fr)"; the code alone when the browser has no name for it. */
export function language(code) {
  if (code === "auto") return "Detect language";
  try {
    const name = names.of(code);
    return name && name !== code ? `${name} (${code})` : code;
  } catch {
    return code;
  }
}

export function number(value) {
  return value === null || value === undefined ? "—" : numbers.format(value);
}

export function decimal(value, digits = 1) {
  if (value === null || value === undefined) return "—";
  return value.toLocaleString("en", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function percent(ratio) {
  return ratio === null || ratio === undefined ? "—" : `${Math.round(ratio * 100)} %`;
}

/** A <time> for an ISO instant, shown in local time; "—" when null. */
export function when(iso) {
  if (!iso) return "—";
  const date = new Date(iso);
  const today = new Date().toDateString() === date.toDateString();
  const time = date.toLocaleTimeString("en-GB");
  const text = today ? time : `${date.toLocaleDateString("en-CA")} ${time}`;
  return h("time", { datetime: iso, title: iso }, text);
}

export function bytes(size) {
  if (size < 1024) return `${size} B`;
  if (size < 1024 * 1024) return `${decimal(size / 1024)} KiB`;
  return `${decimal(size / 1024 / 1024)} MiB`;
}

/** The progress bar of a job, named for it, and "done / total" beside it. */
export function progress(job, label) {
  const total = Math.max(job.segments_total, 1);
  const done = job.segments_total ? job.segments_done : finished(job) ? 1 : 0;
  return h(
    "span",
    { class: "progress" },
    h("progress", { max: total, value: done, "aria-label": label }),
    h("span", { class: "figure" }, `${number(job.segments_done)} / ${number(job.segments_total)}`),
  );
}

/** A status as the API spells it, styled by its value. */
export function status(value) {
  return h("span", { class: `status status-${value}` }, value);
}
