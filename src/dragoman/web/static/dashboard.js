// The dashboard: every pool's workers, jobs (those at risk of missing their deadline too),
// throughput, engine batches and warm routing, and the newest failures, from GET /v1/fleet (an operator's key when keys are set).
import { api, ApiError, describe } from "./api.js";
import { rateChart } from "./chart.js";
import { byId, fill, h } from "./dom.js";
import { decimal, language, number, percent, when } from "./format.js";
import { setUpKey } from "./key.js";
import { poll } from "./poll.js";

const POLL_MS = 2000;
const regions = new Map(); // pool → its figures' elements

function figure(name, term, hint) {
  const value = h("dd", { "data-figure": name }, "—");
  return { value, nodes: [h("div", { class: "stat" }, h("dt", {}, term, hint ? h("span", { class: "hint block" }, hint) : null), value)] };
}

function region(pool) {
  if (regions.has(pool)) return regions.get(pool);
  const names = [
    ["workers-desired", "Workers desired"],
    ["workers-current", "Workers current"],
    ["workers-busy", "Workers busy"],
    ["workers-live", "Workers registered"],
    ["jobs-queued", "Jobs queued"],
    ["jobs-in-flight", "Jobs in flight"],
    ["jobs-at-risk", "Jobs at risk", "of missing their deadline"],
    ["segments-per-second", "Segments per second", "last 10 s"],
    ["segments-translated", "Segments translated", "by live workers"],
    ["batches", "Engine batches"],
    ["batch-mean", "Mean batch size", "segments per engine call"],
    ["routing-ratio", "Warm-routing hit ratio"],
    ["routing-counts", "Routed warm / all"],
  ];
  const parts = { figures: {} };
  const list = h("dl", { class: "stats" });
  for (const [name, term, hint] of names) {
    const made = figure(name, term, hint);
    parts.figures[name] = made.value;
    list.append(...made.nodes);
  }
  parts.scaler = h("p", { class: "hint" });
  parts.chart = h("div", { class: "chart-box" });
  parts.workers = h("div", {});
  const title = `pool-${pool}-title`;
  byId("pools").append(
    h(
      "section",
      { class: "card pool", "aria-labelledby": title },
      h("h2", { id: title }, `Pool ${pool}`),
      parts.scaler,
      h("div", { class: "pool-body" }, list, h("div", {}, h("h3", {}, "Segments per second"), parts.chart)),
      h("h3", {}, "Workers"),
      parts.workers,
    ),
  );
  regions.set(pool, parts);
  return parts;
}

function workersTable(pool, workers) {
  if (!workers.length) return h("p", { class: "hint" }, "No worker is registered.");
  const head = ["Worker", "Host", "Busy", "Warm models", "Segments", "Mean batch", "Last seen"];
  return h(
    "div",
    { class: "scroll", role: "group", "aria-label": `Workers of pool ${pool}`, tabindex: "0" },
    h(
      "table",
      { class: "table" },
      h("caption", { class: "visually-hidden" }, `Workers of pool ${pool}`),
      h("thead", {}, h("tr", {}, head.map((text) => h("th", { scope: "col" }, text)))),
      h(
        "tbody",
        {},
        workers.map((w) =>
          h(
            "tr",
            {},
            h("th", { scope: "row", class: "mono" }, w.id),
            h("td", {}, w.host),
            h("td", {}, w.busy ? "busy" : "idle"),
            h("td", {}, w.warm_models.join(", ") || "—"),
            h("td", { class: "num" }, number(w.segments_translated)),
            h("td", { class: "num" }, decimal(w.mean_batch_size)),
            h("td", {}, when(w.last_seen)),
          ),
        ),
      ),
    ),
  );
}

function showPool(pool, at) {
  const parts = region(pool.pool);
  const f = parts.figures;
  const rate = pool.segments.per_second;
  const values = {
    "workers-desired": number(pool.workers.desired),
    "workers-current": number(pool.workers.current),
    "workers-busy": number(pool.workers.busy),
    "workers-live": number(pool.workers.live),
    "jobs-queued": number(pool.jobs.queued),
    "jobs-in-flight": number(pool.jobs.in_flight),
    "jobs-at-risk": number(pool.jobs.at_risk),
    "segments-per-second": rate.length ? decimal(rate[rate.length - 1].value) : "—",
    "segments-translated": number(pool.segments.translated),
    batches: number(pool.batches.count),
    "batch-mean": decimal(pool.batches.mean_size),
    "routing-ratio": percent(pool.routing.hit_ratio),
    "routing-counts": `${number(pool.routing.warm)} / ${number(pool.routing.total)}`,
  };
  for (const [name, text] of Object.entries(values)) {
    if (f[name].textContent !== text) f[name].textContent = text;
  }
  const scaler = pool.workers.scaled_at
    ? ["; its scaler last reported at ", when(pool.workers.scaled_at), "."]
    : "; no scaler has reported.";
  fill(parts.scaler, `At most ${number(pool.workers.max)} workers`, scaler);
  fill(parts.chart, rateChart(rate, at, `Segments per second in pool ${pool.pool}`));
  fill(parts.workers, workersTable(pool.pool, pool.registered));
}

function showFailures(failures) {
  if (!failures.length) {
    fill(byId("failures"), h("p", { class: "hint" }, "No failed job."));
    return;
  }
  const head = ["Job", "Tenant", "Languages", "Pool", "Attempts", "Finished", "Code", "Reason"];
  fill(
    byId("failures"),
    h(
      "div",
      { class: "scroll", role: "group", "aria-label": "Table of failed jobs", tabindex: "0" },
      h(
        "table",
        { class: "table" },
        h("caption", { class: "visually-hidden" }, "Recent failures"),
        h("thead", {}, h("tr", {}, head.map((text) => h("th", { scope: "col" }, text)))),
        h(
          "tbody",
          {},
          failures.map((job) =>
            h(
              "tr",
              {},
              h("th", { scope: "row", class: "mono" }, job.id),
              h("td", {}, job.tenant ?? "—"),
              h("td", { title: `${language(job.source_lang)} → ${language(job.target_lang)}` }, `${job.source_lang} → ${job.target_lang}`),
              h("td", {}, job.pool),
              h("td", { class: "num" }, number(job.attempts)),
              h("td", {}, when(job.finished_at)),
              h("td", {}, h("code", {}, job.error.code)),
              h("td", {}, job.error.message),
            ),
          ),
        ),
      ),
    ),
  );
}

let poller = null;

async function refresh() {
  try {
    const fleet = await api("/v1/fleet");
    for (const pool of fleet.pools) showPool(pool, fleet.at);
    showFailures(fleet.failures);
    byId("failures-section").hidden = false;
    fill(byId("fleet-error"));
  } catch (caught) {
    fill(byId("fleet-error"), describe(caught));
    if (caught instanceof ApiError && caught.status === 403) poller.stop();
    throw caught;
  }
}

poller = poll(refresh, POLL_MS);
setUpKey(() => location.reload());
