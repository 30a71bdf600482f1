// The API key: asked for once when the server answers 401, kept in this tab's session
// storage, sent only in the Authorization header (never in a URL).
import { byId } from "./dom.js";

const STORAGE = "dragoman.key";
let asking = null;
let declined = false; // cancelled: ask again only when the person opens the dialog

export function currentKey() {
  return sessionStorage.getItem(STORAGE);
}

/** Asks for a key; resolves true once one is given, false if the person cancels (then
 * later 401s do not ask again until ``force``, the header's button). */
export function askKey(reason, force = false) {
  byId("key-button").hidden = false;
  if (asking) return asking;
  if (declined && !force) return Promise.resolve(false);
  const dialog = byId("key-dialog");
  const input = byId("key-input");
  byId("key-reason").textContent = reason;
  input.value = "";
  asking = new Promise((resolve) => {
    const done = (given) => {
      dialog.removeEventListener("close", onClose);
      asking = null;
      resolve(given);
    };
    const onClose = () => {
      const key = input.value.trim();
      declined = !(dialog.returnValue === "use" && key);
      if (!declined) sessionStorage.setItem(STORAGE, key);
      done(!declined);
    };
    dialog.addEventListener("close", onClose);
    dialog.returnValue = "";
    dialog.showModal();
    input.focus();
  });
  return asking;
}

export function setUpKey(onChange) {
  byId("key-cancel").addEventListener("click", () => byId("key-dialog").close("cancel"));
  byId("key-button").addEventListener("click", async () => {
    if (await askKey("The API key for this tab:", true)) onChange();
  });
  byId("key-button").hidden = currentKey() === null;
}
