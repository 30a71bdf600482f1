// A job's page: its state, its error if it failed, and each document's partial results
// beside the source, refreshed until it ends.
import { api, ApiError, describe } from "./api.js";
import { downloadLink } from "./download.js";
import { byId, fill, h } from "./dom.js";
import { finished, language, number, progress, status, when } from "./format.js";
import { setUpKey } from "./key.js";
import { poll } from "./poll.js";

const POLL_MS = 1500;
const SHOWN = 500; // segments shown per document; the rest is in the result and the files
const id = decodeURIComponent(location.pathname.split("/").pop());
let sources = null;
let poller = null;

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

function table(job, name, texts, translations) {
  const rows = texts.slice(0, SHOWN).map((text, i) =>
    h(
      "tr",
      {},
      h("td", { class: "num" }, String(i + 1)),
      h("td", { lang: job.source_lang === "auto" ? null : job.source_lang }, text),
      translations[i] === null ? h("td", { class: "hint" }, "not yet") : h("td", { lang: job.target_lang }, translations[i]),
    ),
  );
  return h(
    "div",
    { class: "scroll", role: "group", "aria-label": `Segments of ${name}`, tabindex: "0" },
    h(
      "table",
      { class: "table side-by-side" },
      h("caption", {}, `${name}: source and translation`),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "#"), h("th", { scope: "col" }, "Source"), h("th", { scope: "col" }, "Translation"))),
      h("tbody", {}, rows),
    ),
  );
}

function documents(job, result) {
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
        table(job, doc.name, source.segments, doc.segments),
        doc.segments.length > SHOWN ? h("p", { class: "hint" }, `The first ${SHOWN} segments are shown.`) : null,
      );
    }),
  );
}

async function refresh() {
  try {
    const job = await api(`/v1/jobs/${encodeURIComponent(id)}`);
    byId("job-title").textContent = `Job ${job.id}`;
    summary(job);
    sources ??= await api(`/v1/jobs/${encodeURIComponent(id)}/sources`);
    documents(job, await api(`/v1/jobs/${encodeURIComponent(id)}/result`));
    fill(byId("job-error"));
    if (finished(job)) poller.stop();
  } catch (caught) {
    fill(byId("job-error"), describe(caught));
    if (caught instanceof ApiError && caught.status === 404) poller.stop();
    throw caught;
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
poller = poll(refresh, POLL_MS);
setUpKey(() => location.reload());
