// Building the page's elements: a tag, its attributes and its children, in one call.

type Child = Node | string | null | undefined | false;
type Attributes = Record<string, string | number | boolean | EventListener | undefined>;

/** An element with ``attributes`` (``on…`` names take listeners; false or undefined leave one
 * out) and ``children`` (strings become text). */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      element.addEventListener(name.slice(2), value);
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
}

/** Replace everything in ``parent`` with ``children``. */
export function replaceChildren(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A row of radio buttons named ``name``, one per label, the ``chosen`` one checked;
 * ``choose`` hears the index of each one picked. */
export function radioGroup(
  id: string,
  name: string,
  labels: readonly string[],
  chosen: number,
  choose: (index: number) => void,
): HTMLElement {
  return h(
    "div",
    { class: "choices", role: "radiogroup", id },
    ...labels.map((label, index) =>
      h("label", {},
        h("input", { type: "radio", name, value: index, checked: chosen === index, onchange: () => choose(index) }),
        label),
    ),
  );
}
