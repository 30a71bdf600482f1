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

/** "Download <name>" for file ``n`` of ``job``, and room for the API's error beside it. */
export function downloadLink(job, n, name) {
  const shown = translatedName(name, job.target_lang);
  const url = `/v1/jobs/${encodeURIComponent(job.id)}/files/${n}`;
  const link = h("a", { href: url, download: shown }, `Download ${shown}`);
  const problem = h("span", { class: "error" });
  link.addEventListener("click", async (event) => {
    if (link.dataset.ready) return; // the object URL is in place: the browser saves it
    event.preventDefault();
    try {
      const response = await api(url, { raw: true });
      const blob = await response.blob();
      link.download = filenameOf(response) || shown;
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
