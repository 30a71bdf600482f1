// Download links for translated files. With API keys the file needs the Authorization
// header, which a plain link cannot send: the first click fetches it and hands the browser
// an object URL to save.
import { api, describe } from "./api.js";
import { fill, h } from "./dom.js";

/** The name the server gives a translated file: "<stem>.<target><ext>". */
export function translatedName(name, target) {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? `${name.slice(0, dot)}.${target}${name.slice(dot)}` : `${name}.${target}`;
}

function filenameOf(response) {
  const header = response.headers.get("Content-Disposition") || "";
  const utf8 = /filename\*=UTF-8''([^;]+)/i.exec(header);
  if (utf8) return decodeURIComponent(utf8[1]);
  const plain = /filename="([^"]*)"/i.exec(header);
  return plain ? plain[1] : null;
}

/** A link that saves ``url`` as ``shown`` (or as the server names it, unless ``fixed``),
 * and room for the API's error beside it. */
function saving(url, shown, label, fixed = false) {
  const link = h("a", { href: url, download: shown }, label);
  const problem = h("span", { class: "error" });
  link.addEventListener("click", async (event) => {
    if (link.dataset.ready) return; // the object URL is in place: the browser saves it
    event.preventDefault();
    try {
      const response = await api(url, { raw: true });
      const blob = await response.blob();
      link.download = (!fixed && filenameOf(response)) || shown;
      link.href = URL.createObjectURL(blob);
      link.dataset.ready = "1";
      fill(problem);
      link.click();
    } catch (caught) {
      fill(problem, describe(caught));
    }
  });
  return h("span", { class: "download" }, link, " ", problem);
}

/** "Download <name>" for file ``n`` of ``job``: into ``target``, which a job of several
 * target languages names. */
export function downloadLink(job, n, name, target = job.target_lang) {
  const shown = translatedName(name, target);
  const query = job.target_langs.length > 1 ? `?target=${encodeURIComponent(target)}` : "";
  return saving(`/v1/jobs/${encodeURIComponent(job.id)}/files/${n}${query}`, shown, `Download ${shown}`);
}

/** Every file of ``job`` in one zip, a folder per target language; ``target``'s only, with one. */
export function zipLink(job, target = null, label = "Download all files (zip)") {
  const query = target ? `?target=${encodeURIComponent(target)}` : "";
  const shown = target ? `${job.id}.${target}.zip` : `${job.id}.zip`;
  return saving(`/v1/jobs/${encodeURIComponent(job.id)}/files.zip${query}`, shown, label, true);
}
