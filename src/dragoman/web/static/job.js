// A job's page: its state, its error if it failed, each target language's progress and
// downloads, and each document's partial results beside the source (into one target at a
// time), moved by the job's events until it ends.
import { api, ApiError, describe } from "./api.js";
import { downloadLink, zipLink } from "./download.js";
import { byId, fill, h } from "./dom.js";
import { follow } from "./events.js";
import { finished, language, number, progress, status, when } from "./format.js";
import { setUpKey } from "./key.js";
import { poll } from "./poll.js";

const POLL_MS = 1500;
const SHOWN = 200; // segments shown at a time per document
const id = decodeURIComponent(location.pathname.split("/").pop());
const path = `/v1/jobs/${encodeURIComponent(id)}`;
const choice = byId("shown");
let sources = null;
let poller = null;
let last = null; // the job, and the result shown (into last.target), to page through without a call
let switching = null; // another target's result on its way, and its segments heard meanwhile
const pages = new Map(); // document index → the first segment shown
const told = new Map(); // target language → segments its events told since the stream began

function several(job) {
  return job.target_langs.length > 1;
}

function isFiles() {
  return sources.documents.some((doc) => doc.format);
}

/** Each target's progress: as the job said, or as its events told since, whichever is further. */
function targetsOf(job) {
  return job.targets.map((t) => ({
    ...t,
    segments_done: Math.min(t.segments_total, Math.max(t.segments_done, told.get(t.target_lang) ?? 0)),
  }));
}

function fact(term, ...value) {
  return [h("dt", {}, term), h("dd", {}, ...value)];
}

function summary(job) {
  fill(
    byId("summary"),
    fact("Status", status(job.status)),
    fact("Progress", progress(job, "Progress")),
    fact("Languages", `${language(job.source_lang)} → ${job.target_langs.map(language).join(", ")}`),
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

/** With several target languages: each one's status, progress and zip of files. */
function targets(job) {
  byId("targets-card").hidden = !several(job);
  if (!several(job)) return;
  const files = isFiles();
  const row = (t) =>
    h(
      "tr",
      { "data-target": t.target_lang },
      h("th", { scope: "row" }, language(t.target_lang)),
      h("td", {}, status(t.status)),
      h("td", {}, progress(t, `Progress into ${language(t.target_lang)}`)),
      files ? h("td", {}, t.status === "succeeded" ? zipLink(job, t.target_lang, `Download ${t.target_lang} files (zip)`) : h("span", { class: "hint" }, finished(t) ? "none" : "not yet")) : null,
    );
  fill(
    byId("targets"),
    h(
      "table",
      { class: "table" },
      h("caption", { class: "visually-hidden" }, "Each target language"),
      h("thead", {}, h("tr", {}, ["Language", "Status", "Progress", files ? "Files" : null].filter(Boolean).map((name) => h("th", { scope: "col" }, name)))),
      h("tbody", {}, targetsOf(job).map(row)),
    ),
    files && (job.status === "succeeded" || (finished(job) && targetsOf(job).some((t) => t.status === "succeeded"))) ? h("p", {}, zipLink(job)) : null,
  );
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
        : h("td", { lang: last.target }, marked(translations[first + i])),
    ),
  );
}

function table(job, name, texts, translations, first) {
  const heading = several(job) ? `Translation into ${language(last.target)}` : "Translation";
  return h(
    "div",
    { class: "scroll", role: "group", "aria-label": `Segments of ${name}`, tabindex: "0" },
    h(
      "table",
      { class: "table side-by-side" },
      h("caption", { class: "visually-hidden" }, `${name}: source and translation`),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "#"), h("th", { scope: "col" }, "Source"), h("th", { scope: "col" }, heading))),
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

/** The document's translated file, into each target language that has it. */
function downloads(job, n, name) {
  if (!several(job)) return job.status === "succeeded" ? downloadLink(job, n, name) : null;
  const done = job.targets.filter((t) => t.status === "succeeded");
  return done.map((t) => downloadLink(job, n, name, t.target_lang));
}

function documents(job, result) {
  last = { ...last, job, result };
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
        source.format ? h("p", { class: "links" }, downloads(job, n, doc.name)) : null,
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

function show() {
  summary(last.job);
  targets(last.job);
  documents(last.job, last.result);
}

/** The target whose translations are shown: the address's ?target=, else the first. */
function chosenTarget(job) {
  const wanted = new URLSearchParams(location.search).get("target");
  return job.target_langs.includes(wanted) ? wanted : job.target_langs[0];
}

async function resultInto(job, target) {
  return api(several(job) ? `${path}/result?target=${encodeURIComponent(target)}` : `${path}/result`);
}

function offerChoice(job) {
  byId("shown-field").hidden = !several(job);
  if (!several(job) || choice.options.length) return;
  fill(choice, job.target_langs.map((code) => h("option", { value: code }, language(code))));
}

async function refresh() {
  try {
    const job = await api(path);
    byId("job-title").textContent = `Job ${job.id}`;
    sources ??= await api(`${path}/sources`);
    const target = last?.target ?? chosenTarget(job);
    last = { job, target, result: await resultInto(job, target) };
    offerChoice(job);
    choice.value = target;
    show();
    fill(byId("job-error"));
    if (finished(job)) poller?.stop();
  } catch (caught) {
    fill(byId("job-error"), describe(caught));
    if (caught instanceof ApiError && caught.status === 404) poller?.stop();
    throw caught;
  }
}

/** Shows the documents translated into another target language. */
async function choose() {
  const target = choice.value;
  const params = new URLSearchParams(location.search);
  params.set("target", target);
  history.replaceState(null, "", `${location.pathname}?${params}`);
  switching = { target, heard: [] };
  try {
    const result = await resultInto(last.job, target);
    for (const data of switching.heard) record(result, data);
    last = { ...last, target, result };
    pages.clear();
    show();
    fill(byId("job-error"));
  } catch (caught) {
    fill(byId("job-error"), describe(caught));
  } finally {
    switching = null;
  }
}

function record(result, data) {
  const translations = result.documents[data.document].segments;
  for (const segment of data.segments) translations[segment.index] = segment.text;
}

/** What an event changes: the summary, a target's progress, or the translations of one document. */
function apply(kind, data) {
  if (kind === "status") last.job = data;
  else if (kind === "progress") last.job = { ...last.job, ...data };
  else if (kind === "segments") {
    const target = data.target_lang ?? last.job.target_lang;
    told.set(target, (told.get(target) ?? 0) + data.segments.length);
    if (target === last.target) record(last.result, data);
    if (target === switching?.target) switching.heard.push(data);
  } else return;
  show();
}

/** The job as it is, then its events; polls a server that has none. */
async function live() {
  try {
    await refresh();
    if (finished(last.job)) return;
    if (!(await follow(`${path}/events`, apply))) poller = poll(refresh, POLL_MS);
  } catch (caught) {
    fill(byId("job-error"), describe(caught));
  }
}

async function cancel() {
  try {
    await api(path, { method: "DELETE" });
    fill(byId("cancel-error"));
    await refresh();
  } catch (caught) {
    fill(byId("cancel-error"), describe(caught));
  }
}

byId("cancel").addEventListener("click", cancel);
choice.addEventListener("change", choose);
document.title = `Job ${id} · dragoman`;
live();
setUpKey(() => location.reload());
