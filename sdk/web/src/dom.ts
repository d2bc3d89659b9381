// Small DOM building helpers: elements are made with properties and children, never from
// HTML strings, so that nothing the server or the person sends is parsed as markup (and the
// hosted page's CSP needs no 'unsafe-inline').

type Child = Node | string | null | undefined | false;

/** h makes an element with attributes (strings, set as attributes) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string | undefined> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== undefined) el.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c);
  }
  return el;
}

/** button makes a type=button button with a class and a click handler. */
export function button(cls: string, text: string, onClick: () => void): HTMLButtonElement {
  const b = h("button", { type: "button", class: cls }, text);
  b.addEventListener("click", onClick);
  return b;
}

/** replace empties el and appends children. */
export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren(...children.filter((c): c is Node | string => c !== null && c !== undefined && c !== false));
}
