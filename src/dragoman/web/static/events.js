// A job's events (GET /v1/jobs/{id}/events), read through fetch so that the API key goes in
// its header as on every call. A stream that drops is taken up again after its last event.
import { api } from "./api.js";
import { finished } from "./format.js";

const RETRY_MS = 2000;

/** The events of one block of the stream: its kind, its id and its JSON data. */
function parse(block) {
  let kind = "message";
  let id = null;
  const data = [];
  for (const line of block.split("\n")) {
    const colon = line.indexOf(":");
    if (colon === 0) continue; // a comment: the keep-alive
    const name = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (name === "event") kind = value;
    else if (name === "id") id = value;
    else if (name === "data") data.push(value);
  }
  return { kind, id, data: data.length ? JSON.parse(data.join("\n")) : null };
}

/** Calls ``onEvent(kind, data)`` for each event of ``path`` until the job's last status.
 * False, at once, when the server has no events to give (then poll instead). */
export async function follow(path, onEvent) {
  let last = null;
  for (;;) {
    try {
      const headers = last ? { "Last-Event-ID": last } : {};
      const response = await api(path, { raw: true, headers });
      if (!(response.headers.get("content-type") || "").startsWith("text/event-stream")) return false;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const event = parse(buffer.slice(0, end));
          buffer = buffer.slice(end + 2);
          if (event.id !== null) last = event.id;
          if (event.data === null) continue;
          onEvent(event.kind, event.data);
          if (event.kind === "status" && finished(event.data)) return true;
        }
      }
    } catch (caught) {
      if (caught && caught.status >= 400 && caught.status < 500) throw caught; // gone, or refused
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}
