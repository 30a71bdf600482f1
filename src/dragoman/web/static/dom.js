// Building the DOM from data: text always goes in as text (createTextNode, textContent),
// never as HTML, so a job or file name shows as typed, whatever characters it has.

/** An element with attributes (on* names become listeners) and children (strings are text). */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2), value);
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

/** Appends children: nodes as they are, strings and numbers as text, nested arrays flattened. */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Replaces every child of ``parent``. */
export function fill(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

export function byId(id) {
  return document.getElementById(id);
}

const SVG = "http://www.w3.org/2000/svg";

/** An SVG element with attributes. */
export function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) {
    element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}
