// The translator's file section: choose or drop files, tick the languages to translate
// them into, send them as one multipart job, follow its progress, read partial results,
// cancel, and download each translated file.
import { api, describe } from "./api.js";
import { byId, fill, h } from "./dom.js";
import { downloadLink, zipLink } from "./download.js";
import { bytes, finished, language, progress, status } from "./format.js";
import { poll } from "./poll.js";

const POLL_MS = 1000;
const PARTIAL_SHOWN = 50;
let chosen = [];
let offered = []; // the target languages the source reaches, in the order shown
let ticked = new Set(); // those the files go into
let own = false; // the person ticked or unticked one: the text's target no longer decides
const followed = new Map(); // job id → {job, names, card parts}

/** A checkbox per language the source reaches. Until the person ticks one, the files go
 * into the text's target language; a language the new source does not reach is unticked. */
export function offerTargets(codes, textTarget) {
  offered = codes;
  if (!own) ticked = new Set([textTarget]);
  ticked = new Set(codes.filter((code) => ticked.has(code)));
  fill(
    byId("file-targets"),
    codes.map((code) => {
      const box = h("input", { type: "checkbox", id: `into-${code}`, value: code, checked: ticked.has(code) });
      box.addEventListener("change", () => {
        own = true;
        if (box.checked) ticked.add(code);
        else ticked.delete(code);
      });
      return h("span", { class: "check" }, box, h("label", { for: `into-${code}` }, language(code)));
    }),
  );
}

function several(job) {
  return job.target_langs.length > 1;
}

function choose(files) {
  chosen = [...files];
  // Shown only with files to send: until then "Translate" names one button on the page.
  byId("send-files").hidden = chosen.length === 0;
  fill(
    byId("chosen"),
    chosen.map((file) => h("li", {}, file.name, h("span", { class: "hint" }, ` ${bytes(file.size)}`))),
  );
}

async function showPartial(entry) {
  const result = await api(`/v1/jobs/${entry.job.id}/result`);
  fill(
    entry.partial,
    result.documents.map((doc) => {
      const done = doc.segments.filter((s) => s !== null);
      return h(
        "div",
        { class: "partial-doc" },
        h("h4", {}, doc.name, several(entry.job) ? ` → ${language(doc.target_lang)}` : ""),
        h("ol", {}, done.slice(0, PARTIAL_SHOWN).map((text) => h("li", {}, text))),
        done.length > PARTIAL_SHOWN ? h("p", { class: "hint" }, `… and ${done.length - PARTIAL_SHOWN} more`) : null,
        done.length === 0 ? h("p", { class: "hint" }, "Nothing translated yet.") : null,
      );
    }),
  );
}

function render(entry) {
  const { job, names } = entry;
  fill(entry.state, status(job.status), " ", progress(job, `Progress of ${names.join(", ")}`));
  if (job.error) fill(entry.problem, `${job.error.message} (${job.error.code})`);
  entry.cancel.hidden = finished(job);
  if (job.status === "succeeded" && !entry.links.childElementCount) {
    const links = job.target_langs.flatMap((target) => names.map((name, n) => h("li", {}, downloadLink(job, n, name, target))));
    fill(entry.links, links, several(job) ? h("li", {}, zipLink(job)) : null);
  }
}

async function cancel(entry) {
  try {
    entry.job = await api(`/v1/jobs/${entry.job.id}`, { method: "DELETE" });
    fill(entry.problem);
    render(entry);
  } catch (caught) {
    fill(entry.problem, describe(caught));
  }
}

function follow(job, names) {
  const entry = { job, names };
  entry.state = h("span", { class: "state" });
  entry.problem = h("span", { class: "error" });
  entry.links = h("ul", { class: "downloads" });
  entry.partial = h("div", { class: "partial" });
  entry.cancel = h("button", { type: "button", class: "quiet", onclick: () => cancel(entry) }, "Cancel");
  const details = h("details", {}, h("summary", {}, "Partial results"), entry.partial);
  details.addEventListener("toggle", () => details.open && showPartial(entry).catch(() => {}));
  entry.details = details;
  const title = h("a", { href: `/jobs/${job.id}` }, names.join(", "));
  const into = h("span", { class: "hint" }, ` into ${job.target_langs.map(language).join(", ")}`);
  byId("file-jobs").prepend(
    h("li", { class: "file-job" }, h("p", {}, title, into), h("p", {}, entry.state, " ", entry.cancel, " ", entry.problem), entry.links, details),
  );
  followed.set(job.id, entry);
  render(entry);
}

async function refresh() {
  for (const entry of followed.values()) {
    if (finished(entry.job)) continue;
    entry.job = await api(`/v1/jobs/${entry.job.id}`);
    render(entry);
    if (entry.details.open) await showPartial(entry);
  }
}

async function send(languages) {
  const error = byId("files-error");
  const targets = offered.filter((code) => ticked.has(code));
  if (!targets.length) {
    fill(error, "Tick at least one language to translate the files into.");
    return;
  }
  const form = new FormData();
  form.append("source_lang", languages.source.value);
  if (targets.length === 1) form.append("target_lang", targets[0]);
  else form.append("target_langs", targets.join(","));
  if (languages.marks.checked) form.append("mark_unknown", "true");
  for (const file of chosen) form.append("files", file, file.name);
  try {
    const job = await api("/v1/jobs", { method: "POST", form });
    fill(error);
    follow(job, chosen.map((file) => file.name));
    byId("files").value = "";
    choose([]);
  } catch (caught) {
    fill(error, describe(caught));
  }
}

async function showFormats() {
  const { formats } = await api("/v1/formats");
  const extensions = formats.flatMap((f) => f.extensions);
  byId("files").setAttribute("accept", extensions.join(","));
  fill(byId("formats"), `Formats: ${extensions.join(" ")}`);
}

export function setUpFiles(languages) {
  const input = byId("files");
  const zone = byId("drop");
  input.addEventListener("change", () => choose(input.files));
  zone.addEventListener("dragover", (event) => {
    event.preventDefault();
    zone.classList.add("dragging");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("dragging"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("dragging");
    choose(event.dataTransfer.files);
  });
  byId("send-files").addEventListener("click", () => send(languages));
  languages.ready.then(() => showFormats().catch(() => {}));
  poll(refresh, POLL_MS);
}
