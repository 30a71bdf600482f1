// A job's page: its state, its error if it failed, and each document's partial results
// beside the source, moved by the job's events until it ends.
import { api, ApiError, describe } from "./api.js";
import { downloadLink } from "./download.js";
import { byId, fill, h } from "./dom.js";
import { follow } from "./events.js";
import { finished, language, number, progress, status, when } from "./format.js";
import { setUpKey } from "./key.js";
import { poll } from "./poll.js";

const POLL_MS = 1500;
const SHOWN = 200; // segments shown at a time per document
const id = decodeURIComponent(location.pathname.split("/").pop());
let sources = null;
let poller = null;
let last = null; // the job and result shown, to page through without a call
const pages = new Map(); // document index → the first segment shown

function fact(term, ...value) {
  return [h("dt", {}, term), h("dd", {}, ...value)];
}

function summary(job) {
  fill(
    byId("summary"),
    fact("Status", status(job.status)),
    fact("Progress", progress(job, "Progress")),
    fact("Languages", `${language(job.source_lang)} → ${language(job.target_lang)}`),
    fact("Pool", job.pool),
    fact("Priority", job.priority),
    fact("Documents", number(job.documents)),
    fact("Attempts", number(job.attempts)),
    fact("Created", when(job.created_at)),
    fact("Submitted", when(job.submitted_at)),
    fact("Started", when(job.started_at)),
    fact("Finished", when(job.finished_at)),
    job.error ? fact("Error", h("strong", { class: "error" }, job.error.message), " ", h("code", {}, job.error.code)) : [],
  );
  byId("cancel").hidden = finished(job);
}

/** A file's segment, its inline codes (<g1>, </g1>, <x2/>) set apart from the text. */
function marked(text) {
  return text
    .split(/(<\/?g\d+>|<x\d+\/>)/)
    .filter(Boolean)
    .map((part) => (/^<\/?[gx]\d+\/?>$/.test(part) ? h("span", { class: "code", title: "inline code" }, part) : part));
}

function rows(job, texts, translations, first) {
  return texts.slice(first, first + SHOWN).map((text, i) =>
    h(
      "tr",
      {},
      h("td", { class: "num" }, String(first + i + 1)),
      h("td", { lang: job.source_lang === "auto" ? null : job.source_lang }, marked(text)),
      translations[first + i] === null
        ? h("td", { class: "hint" }, "not yet")
        : h("td", { lang: job.target_lang }, marked(translations[first + i])),
    ),
  );
}

function table(job, name, texts, translations, first) {
  return h(
    "div",
    { class: "scroll", role: "group", "aria-label": `Segments of ${name}`, tabindex: "0" },
    h(
      "table",
      { class: "table side-by-side" },
      h("caption", { class: "visually-hidden" }, `${name}: source and translation`),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "#"), h("th", { scope: "col" }, "Source"), h("th", { scope: "col" }, "Translation"))),
      h("tbody", {}, rows(job, texts, translations, first)),
    ),
  );
}

/** "Segments 501–1,000 of 20,000" and buttons to move by a page, for a long document. */
function pager(n, total) {
  const first = pages.get(n) ?? 0;
  if (total <= SHOWN) return null;
  const move = (to) => () => {
    pages.set(n, Math.max(0, Math.min(to, total - 1)));
    if (last) documents(last.job, last.result);
  };
  const end = Math.min(first + SHOWN, total);
  return h(
    "div",
    { class: "row pager", "data-pager": n },
    h("button", { type: "button", class: "quiet", disabled: first === 0, onclick: move(first - SHOWN), "data-focus": `${n}-earlier` }, "Earlier segments"),
    h("span", {}, `Segments ${number(first + 1)}–${number(end)} of ${number(total)}`),
    h("button", { type: "button", class: "quiet", disabled: end >= total, onclick: move(first + SHOWN), "data-focus": `${n}-later` }, "Later segments"),
    h("button", { type: "button", class: "quiet", disabled: end >= total, onclick: move(Math.floor((total - 1) / SHOWN) * SHOWN), "data-focus": `${n}-last` }, "Last segments"),
  );
}

function documents(job, result) {
  last = { job, result };
  // A refresh rebuilds the documents: the control a person was on keeps the focus.
  const focused = document.activeElement?.dataset?.focus;
  fill(
    byId("documents"),
    result.documents.map((doc, n) => {
      const source = sources.documents[n];
      const done = doc.segments.filter((s) => s !== null).length;
      return h(
        "article",
        { class: "card" },
        h("h3", {}, doc.name),
        h("p", { class: "hint" }, `${number(done)} of ${number(doc.segments.length)} segments translated`, source.format ? ` · ${source.format} file` : ""),
        source.format && job.status === "succeeded" ? h("p", {}, downloadLink(job, n, doc.name)) : null,
        pager(n, doc.segments.length),
        table(job, doc.name, source.segments, doc.segments, pages.get(n) ?? 0),
      );
    }),
  );
  if (focused) {
    const pager = `[data-pager="${focused.split("-")[0]}"] button:not([disabled])`;
    (document.querySelector(`[data-focus="${focused}"]:not([disabled])`) ?? document.querySelector(pager))?.focus();
  }
}

async function refresh() {
  try {
    const job = await api(`/v1/jobs/${encodeURIComponent(id)}`);
    byId("job-title").textContent = `Job ${job.id}`;
    summary(job);
    sources ??= await api(`/v1/jobs/${encodeURIComponent(id)}/sources`);
    documents(job, await api(`/v1/jobs/${encodeURIComponent(id)}/result`));
    fill(byId("job-error"));
    if (finished(job)) poller?.stop();
  } catch (caught) {
    fill(byId("job-error"), describe(caught));
    if (caught instanceof ApiError && caught.status === 404) poller?.stop();
    throw caught;
  }
}

/** What an event changes: the summary, or the translations of one document. */
function apply(kind, data) {
  if (kind === "status") last.job = data;
  else if (kind === "progress") last.job = { ...last.job, ...data };
  else if (kind === "segments") {
    const translations = last.result.documents[data.document].segments;
    for (const segment of data.segments) translations[segment.index] = segment.text;
  } else return;
  summary(last.job);
  documents(last.job, last.result);
}

/** The job as it is, then its events; polls a server that has none. */
async function live() {
  try {
    await refresh();
    if (finished(last.job)) return;
    if (!(await follow(`/v1/jobs/${encodeURIComponent(id)}/events`, apply))) poller = poll(refresh, POLL_MS);
  } catch (caught) {
    fill(byId("job-error"), describe(caught));
  }
}

async function cancel() {
  try {
    await api(`/v1/jobs/${encodeURIComponent(id)}`, { method: "DELETE" });
    fill(byId("cancel-error"));
    await refresh();
  } catch (caught) {
    fill(byId("cancel-error"), describe(caught));
  }
}

byId("cancel").addEventListener("click", cancel);
document.title = `Job ${id} · dragoman`;
live();
setUpKey(() => location.reload());
