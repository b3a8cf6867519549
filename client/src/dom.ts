/** What the web components share to build their shadow DOM: the theme every element reads, and `h`. */

/** Colours and sizes every element reads; a page overrides any of them on the element or an ancestor. */
export const THEME = `
:host {
  --_bg: var(--notify-bg, #ffffff); --_fg: var(--notify-fg, #1d2430); --_muted: var(--notify-muted, #4f5661);
  --_accent: var(--notify-accent, #1f5fcc); --_accent-fg: var(--notify-accent-fg, #ffffff);
  --_border: var(--notify-border, #d5dae1); --_unread: var(--notify-unread-bg, #eef4ff);
  --_badge-bg: var(--notify-badge-bg, #c62828); --_badge-fg: var(--notify-badge-fg, #ffffff);
  --_radius: var(--notify-radius, 0.5rem); --_focus: var(--notify-focus, #1f5fcc);
  --_shadow: var(--notify-shadow, 0 6px 24px rgb(0 0 0 / 0.18));
  font-family: var(--notify-font, system-ui, sans-serif); color: var(--_fg); font-size: var(--notify-font-size, 0.95rem);
}
button, select { font: inherit; color: inherit; }
:focus-visible { outline: 2px solid var(--_focus); outline-offset: 2px; }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
[hidden] { display: none !important; }
`;

/** `tag` with `attributes` and children (text or nodes). */
export const h = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | boolean | undefined> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] => {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === true) node.setAttribute(name, '');
    else if (typeof value === 'string') node.setAttribute(name, value);
  }
  node.append(...children);
  return node;
};
