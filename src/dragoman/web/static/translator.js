// The translator page: text as you type (debounced, the previous request aborted), the
// languages from /v1/languages, a shareable URL, and the file section (files.js), whose
// files may go into several of the languages the source reaches.
import { api, describe } from "./api.js";
import { byId, fill, h } from "./dom.js";
import { offerTargets, setUpFiles } from "./files.js";
import { language, number } from "./format.js";
import { setUpKey } from "./key.js";

const DEBOUNCE_MS = 500;
const source = byId("source");
const target = byId("target");
const input = byId("source-text");
const output = byId("translation");
const error = byId("text-error");
const marks = byId("mark-unknown");
let pairs = [];
let limit = null;
let pending = null; // the request in flight, to abort when a newer one starts
let timer = null;
let detected = null; // the source language found last with "auto"

function codes(list) {
  return [...new Set(list)].sort((a, b) => language(a).localeCompare(language(b)));
}

function options(select, values, wanted) {
  fill(select, values.map((code) => h("option", { value: code }, language(code))));
  select.value = values.includes(wanted) ? wanted : values[0] ?? "";
}

function fillTargets(wanted) {
  const from = source.value;
  const targets = codes(pairs.filter((p) => from === "auto" || p.source === from).map((p) => p.target));
  options(target, targets, wanted ?? target.value);
  offerTargets(targets, target.value);
}

function characters() {
  return [...input.value].length; // code points, as the server counts
}

function showCount() {
  const count = byId("count");
  const over = limit !== null && characters() > limit;
  count.textContent = limit === null ? number(characters()) : `${number(characters())} / ${number(limit)}`;
  count.classList.toggle("over", over);
  return !over;
}

function shareUrl() {
  const params = new URLSearchParams({ source: source.value, target: target.value });
  if (marks.checked) params.set("marks", "1");
  if (input.value) params.set("q", input.value);
  history.replaceState(null, "", `${location.pathname}?${params}`);
}

/** Each line that has text is a segment of its own; blank lines stay as they are. */
function segmentsOf(text) {
  const lines = text.split(/\r?\n/);
  return { lines, segments: lines.filter((line) => line.trim()) };
}

function joined(lines, translations) {
  let next = 0;
  return lines.map((line) => (line.trim() ? translations[next++] : line)).join("\n");
}

function showDetected(found) {
  detected = found.length ? found[0].language : null;
  const names = found.map((d) => `${language(d.language)}, ${Math.round(d.confidence)} %`);
  fill(byId("detected"), names.length ? `Detected: ${names.join("; ")}` : "");
}

async function translate() {
  clearTimeout(timer);
  pending?.abort();
  shareUrl();
  const { lines, segments } = segmentsOf(input.value);
  if (!segments.length) {
    fill(output);
    fill(byId("detected"));
    fill(error);
    return;
  }
  const controller = (pending = new AbortController());
  output.setAttribute("aria-busy", "true");
  try {
    const body = { source_lang: source.value, target_lang: target.value, segments };
    if (marks.checked) body.mark_unknown = true;
    const answer = await api("/v1/translate", { method: "POST", json: body, signal: controller.signal });
    fill(output, joined(lines, answer.translations));
    showDetected(answer.detected_languages ?? []);
    fill(error);
  } catch (caught) {
    if (caught.name !== "AbortError") fill(error, describe(caught));
  } finally {
    if (pending === controller) {
      pending = null;
      output.removeAttribute("aria-busy");
    }
  }
}

function typed() {
  clearTimeout(timer);
  // Over the limit nothing is sent as you type; the button still asks the server, whose
  // answer says what is wrong.
  if (showCount()) timer = setTimeout(translate, DEBOUNCE_MS);
}

function swap() {
  // From "auto", the language detected last takes the target's place.
  const from = source.value === "auto" ? detected : source.value;
  const to = target.value;
  source.value = pairs.some((p) => p.source === to) ? to : "auto";
  fillTargets(from ?? undefined);
  if (output.textContent) {
    input.value = output.textContent;
    fill(output);
  }
  showCount();
  translate();
}

async function copy() {
  const text = output.textContent;
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // No clipboard API (not a secure context): copy through a selection.
    const area = h("textarea", { class: "offscreen", "aria-hidden": "true" });
    area.value = text;
    document.body.append(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
  fill(byId("copied"), "Copied");
  setTimeout(() => fill(byId("copied")), 2000);
}

async function load() {
  const [languages, limits] = await Promise.all([api("/v1/languages"), api("/v1/limits")]);
  pairs = languages.pairs;
  limit = limits.max_segment_chars;
  const params = new URLSearchParams(location.search);
  options(source, ["auto", ...codes(pairs.map((p) => p.source))], params.get("source") ?? "auto");
  fillTargets(params.get("target") ?? undefined);
  if (params.has("q")) input.value = params.get("q");
  marks.checked = params.get("marks") === "1";
  showCount();
  if (input.value.trim()) translate();
  return limits;
}

function start() {
  source.addEventListener("change", () => {
    fillTargets();
    translate();
  });
  target.addEventListener("change", () => {
    offerTargets([...target.options].map((option) => option.value), target.value);
    translate();
  });
  marks.addEventListener("change", translate);
  input.addEventListener("input", typed);
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      translate();
    }
  });
  byId("translate").addEventListener("click", translate);
  byId("swap").addEventListener("click", swap);
  byId("copy").addEventListener("click", copy);
  const ready = load().catch((caught) => {
    fill(error, describe(caught));
    return null;
  });
  setUpFiles({ source, marks, ready });
  setUpKey(() => location.reload());
}

start();
