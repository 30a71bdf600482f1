// Every call to the server goes through here: the key in the Authorization header, the
// API's own error (code and message) as an ApiError, and the page-wide banner when the
// server does not answer or its store is down.
import { clearBanner, showBanner } from "./banner.js";
import { askKey, currentKey } from "./key.js";

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
  }
}

async function errorOf(response) {
  try {
    const body = await response.json();
    if (body && body.error && typeof body.error.message === "string") {
      return new ApiError(response.status, String(body.error.code), body.error.message);
    }
  } catch {
    // not the API's JSON error: described below
  }
  return new ApiError(response.status, "http_" + response.status, response.statusText || "error");
}

async function send(path, { method = "GET", json, form, signal, headers: extra = {} }) {
  const headers = { ...extra };
  const key = currentKey();
  if (key) headers.Authorization = "Bearer " + key;
  let body;
  if (json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(json);
  } else if (form !== undefined) {
    body = form;
  }
  try {
    return await fetch(path, { method, headers, body, signal, cache: "no-store" });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    showBanner("network", "The server does not answer. Is dragoman running? Trying again…");
    throw new ApiError(0, "unreachable", "the server does not answer");
  }
}

/** Calls the API; the parsed JSON, or the Response itself with ``raw``. Throws ApiError. */
export async function api(path, options = {}) {
  for (;;) {
    const response = await send(path, options);
    clearBanner("network");
    if (response.status === 401) {
      const error = await errorOf(response);
      const reason = currentKey() ? "The key was refused: " : "This server needs an API key: ";
      if (await askKey(reason + error.message)) continue;
      throw error;
    }
    if (response.status === 503) {
      const error = await errorOf(response);
      showBanner("unavailable", `The server cannot work right now: ${error.message} (${error.code})`);
      throw error;
    }
    clearBanner("unavailable");
    if (!response.ok) throw await errorOf(response);
    return options.raw ? response : response.json();
  }
}

/** An error as the API words it, for a message beside what caused it. */
export function describe(error) {
  if (error instanceof ApiError) return `${error.message} (${error.code})`;
  return String(error && error.message ? error.message : error);
}
