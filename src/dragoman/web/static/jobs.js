// The jobs page: the tenant's jobs, newest first, filtered by status, refreshed live.
import { api, describe } from "./api.js";
import { byId, fill, h } from "./dom.js";
import { finished, language, number, progress, status, when } from "./format.js";
import { setUpKey } from "./key.js";
import { poll } from "./poll.js";

const POLL_MS = 2000;
const PAGE = 50;
const filter = byId("status-filter");
const rows = byId("job-rows");
const error = byId("jobs-error");
let shown = PAGE; // how many of the newest jobs the page shows
let cursor = null;

function pair(job) {
  const targets = job.target_langs;
  const title = `${language(job.source_lang)} → ${targets.map(language).join(", ")}`;
  return h("span", { title }, `${job.source_lang} → ${targets.join(", ")}`);
}

async function cancel(job, problem) {
  try {
    await api(`/v1/jobs/${job.id}`, { method: "DELETE" });
    await refresh();
  } catch (caught) {
    fill(problem, describe(caught));
  }
}

/** Enough of an id to tell jobs apart: its last digits, since its first ones are the time
 * it was made (ADR 0030); the link's title and the job page have all of it. */
function shortId(id) {
  return id.length > 12 ? `…${id.slice(-8)}` : id;
}

function cells(job) {
  const problem = h("span", { class: "error" });
  const action = finished(job)
    ? null
    : h("button", { type: "button", class: "quiet", onclick: () => cancel(job, problem) }, "Cancel");
  return [
    h("th", { scope: "row" }, h("a", { href: `/jobs/${job.id}`, class: "mono", title: job.id }, shortId(job.id))),
    h(
      "td",
      {},
      status(job.status),
      job.error ? h("span", { class: "hint block" }, job.error.code) : null,
      job.at_risk ? h("span", { class: "error block", title: `Deadline ${when(job.deadline)}` }, "at risk") : null,
    ),
    h("td", {}, progress(job, `Progress of job ${job.id}`)),
    h("td", { class: "wide" }, pair(job)),
    h("td", { class: "wide" }, job.pool),
    h("td", { class: "wide" }, job.priority),
    h("td", { class: "num wide" }, number(job.attempts)),
    h("td", { class: "wide" }, when(job.created_at)),
    h("td", { class: "wide" }, when(job.started_at)),
    h("td", { class: "wide" }, when(job.finished_at)),
    h("td", {}, action, problem),
  ];
}

/** Rows keep their place and, if a person was on a Cancel button, their focus. */
function show(jobs) {
  const focused = document.activeElement?.closest?.("tr")?.dataset.id;
  const existing = new Map([...rows.children].map((row) => [row.dataset.id, row]));
  const ordered = jobs.map((job) => {
    // The ETA counts down at every read, and this page does not show it.
    const { eta_seconds: _, ...shownPart } = job;
    const key = JSON.stringify(shownPart);
    let row = existing.get(job.id);
    if (!row || row.dataset.key !== key) row = h("tr", { "data-id": job.id, "data-key": key }, cells(job));
    return row;
  });
  rows.replaceChildren(...ordered);
  if (focused) rows.querySelector(`tr[data-id="${CSS.escape(focused)}"] button, tr[data-id="${CSS.escape(focused)}"] a`)?.focus();
  byId("jobs-empty").hidden = jobs.length > 0;
  byId("more").hidden = cursor === null;
}

async function refresh() {
  const params = new URLSearchParams({ limit: String(shown) });
  if (filter.value) params.set("status", filter.value);
  try {
    const page = await api(`/v1/jobs?${params}`);
    cursor = page.next_cursor;
    show(page.jobs);
    fill(error);
  } catch (caught) {
    fill(error, describe(caught));
    throw caught;
  }
}

function start() {
  const params = new URLSearchParams(location.search);
  filter.value = params.get("status") ?? "";
  const poller = poll(refresh, POLL_MS);
  filter.addEventListener("change", () => {
    const query = filter.value ? `?status=${encodeURIComponent(filter.value)}` : "";
    history.replaceState(null, "", `${location.pathname}${query}`);
    shown = PAGE;
    poller.now();
  });
  byId("more").addEventListener("click", () => {
    shown = Math.min(shown + PAGE, 1000);
    poller.now();
  });
  setUpKey(() => poller.now());
}

start();
