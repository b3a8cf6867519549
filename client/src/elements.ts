/**
 * Drop-in web components on the SDK, without a framework: `<notify-bell>` (a button with the unread badge that
 * opens a panel), `<notify-inbox>` (the panel's content: tabs with counts, the list, buttons, snooze, archive)
 * and `<notify-toasts>` (toast notifications, announced to screen readers). Shadow DOM; themed with CSS custom
 * properties (`--notify-*`) and `::part()`. The classes are made when `defineNotifyElements` runs, so importing
 * this module is safe where there is no DOM (server rendering).
 */
import { h, THEME } from './dom.js';
import type { InboxSnapshot } from './inbox.js';
import type { Notify } from './index.js';
import { createSettingsForm, SETTINGS_CSS } from './settings.js';
import type { InboxItem, ItemAction, NotificationFrame } from './wire.js';

export interface NotifyElementsOptions {
  /** The SDK instance elements use unless given their own (`element.notify = …`). */
  readonly notify?: Notify;
}

/** What the elements dispatch (bubbling, composed): a link opened (cancelable: call `preventDefault()` to route it yourself). */
export interface NotifyOpenDetail {
  readonly item: InboxItem;
  /** The button pressed; null for the item itself. */
  readonly action: ItemAction | null;
  readonly url: string;
}

/** The tag names, for frameworks that must be told which tags are custom elements. */
export const NOTIFY_ELEMENT_TAGS = [
  'notify-bell',
  'notify-inbox',
  'notify-toasts',
  'notify-settings',
] as const;

const SNOOZE_CHOICES: readonly { readonly label: string; readonly until: () => Date }[] = [
  { label: '1 hour', until: () => new Date(Date.now() + 3600_000) },
  {
    label: 'Tomorrow morning',
    until: () => {
      const date = new Date();
      date.setDate(date.getDate() + 1);
      date.setHours(9, 0, 0, 0);
      return date;
    },
  },
  { label: 'Next week', until: () => new Date(Date.now() + 7 * 86_400_000) },
];

const BELL_ICON =
  '<svg viewBox="0 0 24 24" width="24" height="24" fill="currentColor" aria-hidden="true" focusable="false"><path d="M12 22a2.5 2.5 0 0 0 2.45-2h-4.9A2.5 2.5 0 0 0 12 22Zm7-6V11a7 7 0 0 0-5.5-6.84V3a1.5 1.5 0 0 0-3 0v1.16A7 7 0 0 0 5 11v5l-2 2v1h18v-1l-2-2Z"/></svg>';

const INBOX_CSS = `${THEME}
:host { display: block; background: var(--_bg); }
.head { display: flex; align-items: center; gap: 0.5rem; padding: 0.75rem 1rem 0.25rem; }
h2 { font-size: 1.05rem; margin: 0; flex: 1; }
.link { background: none; border: 0; color: var(--_accent); cursor: pointer; padding: 0.25rem; border-radius: 0.25rem; }
[role=tablist] { display: flex; gap: 0.25rem; padding: 0.25rem 0.75rem; border-bottom: 1px solid var(--_border); overflow-x: auto; }
[role=tab] { background: none; border: 0; border-bottom: 2px solid transparent; padding: 0.4rem 0.5rem; cursor: pointer; white-space: nowrap; color: var(--_muted); }
[role=tab][aria-selected=true] { color: var(--_fg); border-bottom-color: var(--_accent); font-weight: 600; }
.count { display: inline-block; min-width: 1.2em; margin-left: 0.3em; padding: 0 0.35em; border-radius: 1em; background: var(--_border); color: var(--_fg); font-size: 0.8em; text-align: center; }
ul { list-style: none; margin: 0; padding: 0; }
li { display: flex; gap: 0.6rem; padding: 0.7rem 1rem; border-bottom: 1px solid var(--_border); }
li[data-read=false] { background: var(--_unread); }
.dot { flex: none; width: 0.5rem; height: 0.5rem; margin-top: 0.45rem; border-radius: 50%; }
li[data-read=false] .dot { background: var(--_accent); }
.main { flex: 1; min-width: 0; }
.title { display: block; width: 100%; text-align: left; background: none; border: 0; padding: 0; cursor: pointer; font-weight: 400; overflow-wrap: anywhere; }
li[data-read=false] .title { font-weight: 600; }
.body { color: var(--_muted); margin: 0.15rem 0 0; overflow-wrap: anywhere; }
.meta { color: var(--_muted); font-size: 0.8em; margin-top: 0.2rem; }
.buttons { display: flex; flex-wrap: wrap; gap: 0.35rem; margin-top: 0.45rem; }
.buttons button, .buttons select { border: 1px solid var(--_border); background: var(--_bg); border-radius: 0.35rem; padding: 0.2rem 0.55rem; cursor: pointer; font-size: 0.85em; }
.buttons .action { background: var(--_accent); color: var(--_accent-fg); border-color: var(--_accent); }
.buttons .action[aria-pressed=true] { outline: 2px solid var(--_fg); }
.empty, .error { padding: 1.5rem 1rem; color: var(--_muted); text-align: center; margin: 0; }
.error { color: var(--_badge-bg); padding: 0.5rem 1rem; }
.error:empty, .body:empty { display: none; }
.more { display: block; margin: 0.5rem auto; }
`;

const BELL_CSS = `${THEME}
:host { display: inline-block; position: relative; color: inherit; }
.panel { color: var(--_fg); }
.bell { position: relative; display: grid; place-items: center; width: 2.5rem; height: 2.5rem; border: 0; border-radius: 50%;
  background: var(--notify-bell-bg, transparent); color: var(--notify-bell-fg, currentColor); cursor: pointer; }
.badge { position: absolute; top: 0.1rem; right: 0.05rem; min-width: 1.15rem; height: 1.15rem; padding: 0 0.3rem; box-sizing: border-box;
  border-radius: 0.6rem; background: var(--_badge-bg); color: var(--_badge-fg); font-size: 0.72rem; font-weight: 700; line-height: 1.15rem; text-align: center; }
.panel { position: absolute; z-index: var(--notify-z-index, 1000); top: calc(100% + 0.4rem); right: 0; width: var(--notify-panel-width, 24rem);
  max-height: var(--notify-panel-max-height, 70vh); overflow: auto; background: var(--_bg); border: 1px solid var(--_border);
  border-radius: var(--_radius); box-shadow: var(--_shadow); text-align: left; }
@media (max-width: 480px) {
  .panel { position: fixed; top: var(--notify-panel-top, 3.5rem); left: 0.5rem; right: 0.5rem; width: auto; max-height: calc(100vh - 4rem); }
}
`;

const TOASTS_CSS = `${THEME}
:host { position: fixed; z-index: var(--notify-z-index, 1000); right: 1rem; bottom: 1rem; display: block; }
.region { display: flex; flex-direction: column; gap: 0.5rem; align-items: flex-end; }
.toast { display: flex; gap: 0.75rem; align-items: start; width: min(22rem, calc(100vw - 2rem)); box-sizing: border-box;
  padding: 0.7rem 0.9rem; border-radius: var(--_radius); background: var(--notify-toast-bg, #1d2430);
  color: var(--notify-toast-fg, #ffffff); box-shadow: var(--_shadow); }
.toast .text { flex: 1; min-width: 0; overflow-wrap: anywhere; }
.toast .body { margin: 0.15rem 0 0; color: var(--notify-toast-muted, #d5dae1); }
.toast button { background: none; border: 0; color: inherit; cursor: pointer; font-size: 1.1rem; line-height: 1; padding: 0.1rem 0.3rem; }
@media (max-width: 480px) { :host { left: 0.5rem; right: 0.5rem; bottom: 0.5rem; } .toast { width: 100%; } }
`;

const relativeTime = (iso: string): string => {
  const seconds = (Date.parse(iso) - Date.now()) / 1000;
  const format = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  for (const [unit, size] of [
    ['day', 86_400],
    ['hour', 3600],
    ['minute', 60],
  ] as const)
    if (Math.abs(seconds) >= size) return format.format(Math.round(seconds / size), unit);
  return format.format(0, 'second');
};

/** The tabs an inbox shows: the default feed, unread, each category the counts know, archived. */
interface Tab {
  readonly key: string;
  readonly label: string;
  readonly filter: InboxSnapshot['filter'];
  readonly count: number | null;
}

const tabsOf = (snapshot: InboxSnapshot): Tab[] => {
  const { counts } = snapshot;
  return [
    { key: 'all', label: 'All', filter: {}, count: counts.total },
    { key: 'unread', label: 'Unread', filter: { state: 'unread' }, count: counts.unread },
    ...Object.entries(counts.categories)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, figures]) => ({
        key: `category:${name}`,
        label: name,
        filter: { category: name },
        count: figures.unread,
      })),
    { key: 'archived', label: 'Archived', filter: { state: 'archived' }, count: null },
  ];
};

const keyOf = (filter: InboxSnapshot['filter']): string =>
  filter.category !== undefined ? `category:${filter.category}` : (filter.state ?? 'all');

/**
 * Registers the elements (once; later calls only change the default SDK instance). `notify`: the instance
 * elements use unless one is set on them.
 */
export const defineNotifyElements = (options: NotifyElementsOptions = {}): void => {
  const registry = globalThis.customElements;
  if (!registry) throw new Error('defineNotifyElements needs a browser (customElements)');
  const shared = (globalThis as { __notifyElements?: { notify?: Notify } }).__notifyElements ?? {};
  (globalThis as { __notifyElements?: { notify?: Notify } }).__notifyElements = shared;
  if (options.notify) shared.notify = options.notify;
  if (registry.get('notify-inbox')) {
    for (const tag of NOTIFY_ELEMENT_TAGS)
      for (const element of document.querySelectorAll(tag)) (element as NotifyElement).connect?.();
    return;
  }

  /** What every element shares: its SDK instance (its own or the default), and (re)connecting to it. */
  abstract class NotifyElement extends HTMLElement {
    private own: Notify | undefined;
    protected stop: (() => void) | undefined;
    protected readonly root = this.attachShadow({ mode: 'open' });

    get notify(): Notify | undefined {
      return this.own ?? shared.notify;
    }

    set notify(notify: Notify | undefined) {
      this.own = notify;
      this.connect();
    }

    connectedCallback(): void {
      this.connect();
    }

    disconnectedCallback(): void {
      this.stop?.();
      this.stop = undefined;
    }

    connect(): void {
      this.stop?.();
      this.stop = undefined;
      const notify = this.notify;
      if (notify && this.isConnected) this.stop = this.attach(notify);
    }

    protected abstract attach(notify: Notify): () => void;

    protected emit(type: string, detail: unknown, cancelable = false): boolean {
      return this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true, cancelable }));
    }

    /** A failed change: the store has undone it; tell the page (an `notify-error` event) and the user. */
    protected failed(error: unknown): void {
      this.emit('notify-error', error);
    }
  }

  class NotifyInboxElement extends NotifyElement {
    private snapshot: InboxSnapshot | undefined;
    private readonly rows = new Map<string, { item: InboxItem; row: HTMLLIElement }>();
    private readonly tablist = h('div', {
      role: 'tablist',
      'aria-label': 'Filter notifications',
      part: 'tabs',
    });
    private readonly list = h('ul', { part: 'list', 'aria-label': 'Notifications' });
    private readonly panel = h('div', { role: 'tabpanel', id: 'items', tabindex: '-1', part: 'panel' });
    private readonly empty = h('p', { class: 'empty', part: 'empty' }, 'No notifications');
    private readonly more = h('button', { type: 'button', class: 'link more', part: 'more' }, 'Load more');
    private readonly error = h('p', { class: 'error', role: 'alert', part: 'error' });
    private readonly readAll = h(
      'button',
      { type: 'button', class: 'link', part: 'read-all' },
      'Mark all read',
    );
    private readonly heading = h('h2', { id: 'heading', tabindex: '-1' }, 'Notifications');
    /** Opens the settings view in place of the list, and back. */
    private readonly settingsButton = h(
      'button',
      { type: 'button', class: 'link', 'aria-expanded': 'false', part: 'settings-button' },
      'Settings',
    );
    private settings: HTMLElement | undefined;
    private tabKeys = '';

    constructor() {
      super();
      this.root.append(
        h('style', {}, INBOX_CSS),
        h('div', { class: 'head', part: 'head' }, this.heading, this.readAll, this.settingsButton),
        this.tablist,
        this.error,
        this.panel,
      );
      this.panel.append(this.list, this.empty, this.more);
      this.readAll.addEventListener('click', () => this.run((notify) => notify.inbox.markAllRead()));
      this.more.addEventListener('click', () => this.run((notify) => notify.inbox.loadMore()));
      this.tablist.addEventListener('keydown', (event) => this.moveBetweenTabs(event));
      this.settingsButton.addEventListener('click', () => this.showSettings(!this.settings));
    }

    /** Shows the user's settings (a fresh `<notify-settings>`, so it reads them again) or the list again. */
    showSettings(open: boolean): void {
      this.settings?.remove();
      this.settings = undefined;
      if (open) {
        this.settings = document.createElement('notify-settings');
        (this.settings as NotifyElement).notify = this.notify;
        this.root.append(this.settings);
      }
      for (const node of [this.tablist, this.error, this.panel, this.readAll]) node.hidden = open;
      if (!open && this.snapshot) this.readAll.hidden = this.snapshot.unreadCount === 0;
      this.heading.textContent = open ? 'Settings' : 'Notifications';
      this.settingsButton.textContent = open ? 'Back to notifications' : 'Settings';
      this.settingsButton.setAttribute('aria-expanded', String(open));
      if (open) this.heading.focus();
      else this.focus();
    }

    protected attach(notify: Notify): () => void {
      return notify.inbox.subscribe((snapshot) => this.render(snapshot));
    }

    /** Marks the items shown seen while the inbox is visible (an open panel, an inline inbox on screen). */
    markShownSeen(): void {
      const notify = this.notify;
      if (!notify || !this.snapshot || !this.isConnected || !this.checkVisibility()) return;
      const unseen = this.snapshot.items.filter((item) => item.seen_at === null).map((item) => item.id);
      if (unseen.length > 0) notify.inbox.markSeen(unseen.slice(0, 100)).catch((error) => this.failed(error));
    }

    /** Moves focus into the inbox: the selected tab (the heading of the settings view when that is open). */
    override focus(): void {
      const target = this.settings ? this.heading : this.tablist.querySelector('[aria-selected=true]');
      (target as HTMLElement | null)?.focus();
    }

    private run(change: (notify: Notify) => Promise<unknown>): void {
      const notify = this.notify;
      if (!notify) return;
      this.error.textContent = '';
      change(notify).catch((error: unknown) => {
        this.error.textContent = `That did not work: ${(error as Error).message}`;
        this.failed(error);
      });
    }

    private render(snapshot: InboxSnapshot): void {
      this.snapshot = snapshot;
      this.renderTabs(snapshot);
      const focused = this.root.activeElement as HTMLElement | null;
      const focusKey = focused?.dataset.focus;
      const focusedRow = focused?.closest('li')?.dataset.id;
      const ids = new Set(snapshot.items.map((item) => item.id));
      for (const [id, { row }] of this.rows)
        if (!ids.has(id)) {
          row.remove();
          this.rows.delete(id);
        }
      // Rows already in place stay put: moving a node (even to where it was) takes the keyboard focus from it.
      let previous: HTMLLIElement | undefined;
      for (const item of snapshot.items) {
        let entry = this.rows.get(item.id);
        if (!entry || entry.item !== item) {
          const row = this.renderItem(item, snapshot.filter.state === 'archived');
          entry?.row.replaceWith(row);
          entry = { item, row };
          this.rows.set(item.id, entry);
        }
        const next = previous ? previous.nextElementSibling : this.list.firstElementChild;
        if (next !== entry.row) {
          if (previous) previous.after(entry.row);
          else this.list.prepend(entry.row);
        }
        previous = entry.row;
      }
      // Keep the keyboard where it was: the same control of a re-drawn or moved row, or the next row when it left.
      if (focusedRow && focusKey && this.root.activeElement !== focused) {
        const row = this.rows.get(focusedRow)?.row;
        const target =
          (focused?.isConnected ? focused : null) ??
          (row?.querySelector(`[data-focus="${focusKey}"]`) as HTMLElement | null) ??
          (row?.querySelector('.title') as HTMLElement | null) ??
          (this.list.querySelector('.title') as HTMLElement | null) ??
          this.panel;
        target.focus();
      }
      this.list.hidden = snapshot.items.length === 0;
      this.empty.hidden = snapshot.items.length > 0 || snapshot.status === 'loading';
      this.empty.textContent = snapshot.status === 'loading' ? 'Loading…' : 'No notifications';
      this.more.hidden = !snapshot.hasMore;
      this.readAll.hidden = snapshot.unreadCount === 0 || this.settings !== undefined;
      if (snapshot.error) this.error.textContent = `Could not load notifications: ${snapshot.error.message}`;
      else if (snapshot.status === 'ready' && this.error.textContent?.startsWith('Could not load'))
        this.error.textContent = '';
      queueMicrotask(() => this.markShownSeen());
    }

    private renderTabs(snapshot: InboxSnapshot): void {
      const tabs = tabsOf(snapshot);
      const selected = keyOf(snapshot.filter);
      const keys = JSON.stringify(tabs.map((tab) => [tab.key, tab.count]).concat([[selected, null]]));
      if (keys === this.tabKeys) return;
      const hadFocus = this.root.activeElement?.getAttribute('role') === 'tab';
      this.tabKeys = keys;
      this.tablist.replaceChildren(
        ...tabs.map((tab) => {
          const isSelected = tab.key === selected;
          const button = h(
            'button',
            {
              type: 'button',
              role: 'tab',
              id: `tab-${tab.key}`,
              'aria-selected': String(isSelected),
              'aria-controls': 'items',
              tabindex: isSelected ? '0' : '-1',
              part: isSelected ? 'tab tab-selected' : 'tab',
            },
            tab.label,
            ...(tab.count === null
              ? []
              : [h('span', { class: 'sr-only' }, ', '), h('span', { class: 'count' }, String(tab.count))]),
          );
          button.addEventListener('click', () => this.select(tab));
          return button;
        }),
      );
      this.panel.setAttribute('aria-labelledby', `tab-${selected}`);
      if (hadFocus) (this.tablist.querySelector('[aria-selected=true]') as HTMLElement | null)?.focus();
    }

    private select(tab: Tab): void {
      if (keyOf(tab.filter) === keyOf(this.snapshot?.filter ?? {})) return;
      this.run((notify) => notify.inbox.setFilter(tab.filter));
    }

    /** Arrow keys, Home and End move between tabs and select (the WAI-ARIA tabs pattern). */
    private moveBetweenTabs(event: KeyboardEvent): void {
      const tabs = [...this.tablist.querySelectorAll<HTMLElement>('[role=tab]')];
      const index = tabs.indexOf(this.root.activeElement as HTMLElement);
      if (index < 0) return;
      const next =
        event.key === 'ArrowRight'
          ? (index + 1) % tabs.length
          : event.key === 'ArrowLeft'
            ? (index - 1 + tabs.length) % tabs.length
            : event.key === 'Home'
              ? 0
              : event.key === 'End'
                ? tabs.length - 1
                : -1;
      if (next < 0) return;
      event.preventDefault();
      tabs[next]?.focus();
      tabs[next]?.click();
    }

    /** Follows an item's or a button's link unless the page handles `notify-open` itself. */
    private open(item: InboxItem, action: ItemAction | null, url: string): void {
      const detail: NotifyOpenDetail = { item, action, url };
      if (this.emit('notify-open', detail, true)) globalThis.location.assign(url);
    }

    private renderItem(item: InboxItem, archivedTab: boolean): HTMLLIElement {
      const unread = item.read_at === null;
      const bodyId = `body-${item.id}`;
      const title = h(
        'button',
        { type: 'button', class: 'title', 'data-focus': 'title', 'aria-describedby': bodyId, part: 'title' },
        item.title,
      );
      title.addEventListener('click', () => {
        if (item.url) {
          const url = item.url;
          this.run((notify) => notify.inbox.interact(item.id).catch(() => notify.inbox.markRead(item.id)));
          this.open(item, null, url);
        } else this.run((notify) => notify.inbox.markRead(item.id));
      });
      const buttons = h('div', { class: 'buttons', part: 'buttons' });
      for (const action of item.actions) {
        const button = h(
          'button',
          {
            type: 'button',
            class: 'action',
            'data-focus': `action-${action.id}`,
            'aria-pressed': item.interacted_action === action.id ? 'true' : undefined,
            part: 'action',
          },
          action.label,
        );
        button.addEventListener('click', () => {
          this.run((notify) => notify.inbox.interact(item.id, action.id));
          if (action.url) this.open(item, action, action.url);
        });
        buttons.append(button);
      }
      /** A button named for its item ("Archive: Invoice ready"), which runs `change` on it. */
      const itemButton = (verb: string, focus: string, change: (notify: Notify) => Promise<unknown>) => {
        const button = h(
          'button',
          { type: 'button', 'data-focus': focus, 'aria-label': `${verb}: ${item.title}` },
          verb,
        );
        button.addEventListener('click', () => this.run(change));
        return button;
      };
      if (unread) buttons.append(itemButton('Mark read', 'read', (notify) => notify.inbox.markRead(item.id)));
      if (archivedTab)
        buttons.append(itemButton('Unarchive', 'unarchive', (notify) => notify.inbox.unarchive(item.id)));
      else {
        const snooze = h(
          'select',
          { 'data-focus': 'snooze', 'aria-label': `Snooze: ${item.title}` },
          h('option', { value: '' }, 'Snooze…'),
          ...SNOOZE_CHOICES.map((choice, index) => h('option', { value: String(index) }, choice.label)),
        );
        snooze.addEventListener('change', () => {
          const choice = SNOOZE_CHOICES[Number(snooze.value)];
          if (choice) this.run((notify) => notify.inbox.snooze(item.id, choice.until()));
        });
        buttons.append(
          snooze,
          itemButton('Archive', 'archive', (notify) => notify.inbox.archive(item.id)),
        );
      }
      return h(
        'li',
        { 'data-id': item.id, 'data-read': String(!unread), part: unread ? 'item item-unread' : 'item' },
        h('span', { class: 'dot', 'aria-hidden': 'true' }),
        h(
          'div',
          { class: 'main' },
          ...(unread ? [h('span', { class: 'sr-only' }, 'Unread: ')] : []),
          title,
          h('p', { class: 'body', id: bodyId }, item.body),
          h(
            'div',
            { class: 'meta' },
            h('time', { datetime: item.created_at }, relativeTime(item.created_at)),
            item.category ? ` · ${item.category}` : '',
          ),
          buttons,
        ),
      );
    }
  }

  class NotifyBellElement extends NotifyElement {
    private readonly button = h('button', {
      type: 'button',
      class: 'bell',
      'aria-haspopup': 'dialog',
      'aria-expanded': 'false',
      'aria-controls': 'panel',
      part: 'button',
    });
    private readonly badge = h('span', {
      class: 'badge',
      'aria-hidden': 'true',
      part: 'badge',
      hidden: true,
    });
    private readonly panel = h('div', {
      class: 'panel',
      id: 'panel',
      role: 'dialog',
      'aria-label': 'Notifications',
      hidden: true,
      part: 'panel',
    });
    private readonly inbox = document.createElement('notify-inbox') as NotifyInboxElement;

    constructor() {
      super();
      this.button.innerHTML = BELL_ICON;
      this.button.append(this.badge);
      this.panel.append(this.inbox);
      this.root.append(h('style', {}, BELL_CSS), this.button, this.panel);
      this.button.addEventListener('click', () => this.toggle(!this.open));
      this.panel.addEventListener('keydown', (event) => {
        if (event.key !== 'Escape') return;
        event.stopPropagation();
        this.toggle(false);
        this.button.focus();
      });
      // A click anywhere else closes the panel (events from inside come retargeted to this element).
      this.onOutside = (event: Event) => {
        if (!event.composedPath().includes(this)) this.toggle(false);
      };
    }

    private readonly onOutside: (event: Event) => void;

    get open(): boolean {
      return !this.panel.hidden;
    }

    /** Opens or closes the panel; opening moves focus into it and marks what it shows seen. */
    toggle(open: boolean): void {
      if (open === this.open) return;
      this.panel.hidden = !open;
      this.button.setAttribute('aria-expanded', String(open));
      if (open) {
        document.addEventListener('pointerdown', this.onOutside, true);
        this.inbox.focus();
        this.inbox.markShownSeen();
      } else document.removeEventListener('pointerdown', this.onOutside, true);
      this.emit(open ? 'notify-open-panel' : 'notify-close-panel', null);
    }

    protected attach(notify: Notify): () => void {
      this.inbox.notify = notify;
      return notify.inbox.subscribe(({ counts }) => {
        const count =
          this.getAttribute('count') === 'unseen' ? (counts.unseen ?? counts.unread) : counts.unread;
        const word = this.getAttribute('count') === 'unseen' && counts.unseen !== null ? 'new' : 'unread';
        this.badge.textContent = count > 99 ? '99+' : String(count);
        this.badge.hidden = count === 0;
        this.button.setAttribute(
          'aria-label',
          count === 0 ? 'Notifications' : `Notifications, ${count} ${word}`,
        );
        this.setAttribute('data-count', String(count));
      });
    }

    override disconnectedCallback(): void {
      super.disconnectedCallback();
      document.removeEventListener('pointerdown', this.onOutside, true);
    }
  }

  class NotifyToastsElement extends NotifyElement {
    private readonly region = h('div', {
      class: 'region',
      role: 'status',
      'aria-live': 'polite',
      'aria-label': 'New notifications',
      part: 'region',
    });

    constructor() {
      super();
      this.root.append(h('style', {}, TOASTS_CSS), this.region);
    }

    protected attach(notify: Notify): () => void {
      return notify.realtime.on('notification', (frame) => {
        if (frame.channel === 'toast') this.show(frame);
      });
    }

    /** Shows a toast for `duration` ms (attribute; 6000 by default), longer while hovered or focused. */
    show(frame: Pick<NotificationFrame, 'id' | 'title' | 'body'>): void {
      const dismiss = h(
        'button',
        { type: 'button', 'aria-label': `Dismiss: ${frame.title}`, part: 'dismiss' },
        '×',
      );
      const toast = h(
        'div',
        { class: 'toast', 'data-id': frame.id, part: 'toast' },
        h('div', { class: 'text' }, h('strong', {}, frame.title), h('p', { class: 'body' }, frame.body)),
        dismiss,
      );
      const duration = Number(this.getAttribute('duration') ?? 6000);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const close = () => {
        clearTimeout(timer);
        toast.remove();
      };
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(close, duration);
      };
      dismiss.addEventListener('click', close);
      toast.addEventListener('pointerenter', () => clearTimeout(timer));
      toast.addEventListener('pointerleave', arm);
      toast.addEventListener('focusin', () => clearTimeout(timer));
      toast.addEventListener('focusout', arm);
      this.region.append(toast);
      arm();
    }
  }

  class NotifySettingsElement extends NotifyElement {
    private readonly form = createSettingsForm((error) => this.failed(error));

    constructor() {
      super();
      this.root.append(h('style', {}, THEME + SETTINGS_CSS), this.form.node);
    }

    protected attach(notify: Notify): () => void {
      this.form.load(notify.api);
      return () => {};
    }
  }

  registry.define('notify-settings', NotifySettingsElement);
  registry.define('notify-inbox', NotifyInboxElement);
  registry.define('notify-bell', NotifyBellElement);
  registry.define('notify-toasts', NotifyToastsElement);
};
