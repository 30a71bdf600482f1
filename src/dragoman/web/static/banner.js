// The page-wide alert: the server does not answer, or its store is down. Errors of one
// request are shown beside what caused them instead.
import { byId, fill } from "./dom.js";

let shown = null;

export function showBanner(kind, message) {
  shown = kind;
  fill(byId("banner"), message);
}

/** Clears the banner if ``kind`` put it there (a later success proves the server is back). */
export function clearBanner(kind) {
  if (shown === kind || kind === undefined) {
    shown = null;
    fill(byId("banner"));
  }
}
