/**
 * The inbox: one view of the feed (the default feed, or a tab: a state, a category, a tag), the counts of the
 * default feed, and every change a user makes — read, seen, archive, unarchive, snooze, a click on an item or a
 * button, bulk changes — shown at once and undone if the service refuses. Realtime frames keep it current:
 * new notifications, and state changes made on any of the user's devices (stale ones dropped by revision).
 * Framework-free and headless: `subscribe(listener)` → unsubscribe and `getSnapshot()` are what React's
 * `useSyncExternalStore` takes, and `subscribe` calls the listener at once with the snapshot, as Svelte's store
 * contract asks (Vue: a `shallowRef` the listener sets).
 */
import type { FeedQuery, NotifyApi } from './api.js';
import { NotifyError } from './errors.js';
import type { RealtimeClient } from './realtime.js';
import type {
  BulkChangeScope,
  FeedCounts,
  FeedStateFilter,
  InboxItem,
  ItemExtras,
  ItemStateOf,
  NotificationBulkFrame,
  Receiver,
} from './wire.js';

/** What the store lists: absent fields select the default feed (neither archived nor snoozed), all of it. */
export interface InboxFilter {
  readonly state?: FeedStateFilter;
  readonly category?: string;
  readonly tag?: string;
}

/**
 * Counts of the default feed. `unseen` and `total` are null when the service has no counts route (then
 * `unread` is its unread count and `categories` is empty).
 */
export interface InboxCountsView {
  readonly unread: number;
  readonly unseen: number | null;
  readonly total: number | null;
  readonly categories: Readonly<Record<string, FeedCounts>>;
}

export interface InboxSnapshot {
  /** The view's items, newest first, with changes not yet confirmed applied. */
  readonly items: readonly InboxItem[];
  /** The default feed's unread count (the badge); the same as `counts.unread`. */
  readonly unreadCount: number;
  readonly counts: InboxCountsView;
  readonly filter: InboxFilter;
  /** `idle` before `load()`; `error` when the last load or refresh failed (`error` says why; items stay). */
  readonly status: 'idle' | 'loading' | 'ready' | 'error';
  readonly error: NotifyError | undefined;
  /** Older items exist: `loadMore()` fetches them. */
  readonly hasMore: boolean;
}

export interface InboxOptions {
  readonly api: NotifyApi;
  /** Frames from it keep the inbox current; without it, call `refresh()` yourself. */
  readonly realtime?: RealtimeClient;
  /** Items per page (1–100, default 20). */
  readonly pageSize?: number;
  /** The view to start with (default: the default feed). */
  readonly filter?: InboxFilter;
}

/** A state frame or a REST answer: an item's states after a change. */
type StateOf = Omit<ItemStateOf, 'id'> & { readonly id: string };
type Counted = 'unread' | 'unseen' | 'total';

/** A change sent and not yet answered: the items it applies to, shown changed meanwhile. */
interface Pending {
  readonly applies: (item: InboxItem) => boolean;
  readonly change: (item: InboxItem) => InboxItem;
  /** A bulk change over the whole default feed (or one category of it): the counts it empties. */
  readonly clears?: { readonly counts: readonly Counted[]; readonly category: string | undefined };
}

/** The most pages a refresh reads to meet the items already loaded (at 20 a page, a gap of 200 items). */
const MAX_CATCH_UP_PAGES = 10;

/** Receiver ids are UUID v7 (time-ordered): their text order is their age order. */
const olderThan = (id: string, than: string) => id < than;
const newestFirst = (a: InboxItem, b: InboxItem) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
const now = () => new Date().toISOString();
const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** A feed item with every extra present: what a service without them leaves out reads as null or []. */
export const toInboxItem = (item: Omit<Receiver, keyof ItemExtras> & ItemExtras): InboxItem => {
  const extras = item;
  return Object.freeze({
    ...item,
    category: extras.category ?? null,
    tags: extras.tags ?? [],
    url: extras.url ?? null,
    actions: extras.actions ?? [],
    interacted_at: extras.interacted_at ?? null,
    interacted_action: extras.interacted_action ?? null,
    revision: extras.revision ?? null,
  });
};

/** The item with the states a frame or an answer gives (the fields it carries). */
const withStates = (item: InboxItem, state: StateOf): InboxItem =>
  Object.freeze({
    ...item,
    seen_at: state.seen_at,
    read_at: state.read_at,
    archived_at: state.archived_at,
    snoozed_until: state.snoozed_until,
    interacted_at: state.interacted_at === undefined ? item.interacted_at : state.interacted_at,
    interacted_action:
      state.interacted_action === undefined ? item.interacted_action : state.interacted_action,
    revision: state.revision ?? item.revision,
  });

/** Older than what is known: both numbered, and not higher. */
const isStale = (known: InboxItem, revision: number | null | undefined) =>
  revision != null && known.revision !== null && revision <= known.revision;

const inDefaultFeed = (item: InboxItem) => item.archived_at === null && item.snoozed_until === null;

/** Whether the service lists `item` in the view `filter` (docs/contract.md, the feed's `state` filter). */
export const inView = (filter: InboxFilter, item: InboxItem): boolean => {
  if (filter.category !== undefined && item.category !== filter.category) return false;
  if (filter.tag !== undefined && !item.tags.includes(filter.tag)) return false;
  switch (filter.state) {
    case undefined:
      return inDefaultFeed(item);
    case 'unseen':
      return inDefaultFeed(item) && item.seen_at === null;
    case 'unread':
      return inDefaultFeed(item) && item.read_at === null;
    case 'read':
      return inDefaultFeed(item) && item.read_at !== null;
    case 'archived':
      return item.archived_at !== null && item.snoozed_until === null;
    case 'snoozed':
      return item.snoozed_until !== null;
    case 'all':
      return item.snoozed_until === null;
  }
};

/** What an item adds to the default feed's counts. */
const countsOf = (item: InboxItem): FeedCounts => {
  const counted = inDefaultFeed(item);
  return {
    unread: counted && item.read_at === null ? 1 : 0,
    unseen: counted && item.seen_at === null ? 1 : 0,
    total: counted ? 1 : 0,
  };
};

const NO_COUNTS: InboxCountsView = { unread: 0, unseen: null, total: null, categories: {} };
const COUNTED: readonly Counted[] = ['unread', 'unseen', 'total'];

/** `counts` with `add` added to the field of each (null stays null), never below 0. */
const addCounts = (counts: InboxCountsView, category: string | null, add: FeedCounts): InboxCountsView => {
  if (add.unread === 0 && add.unseen === 0 && add.total === 0) return counts;
  const plus = (value: number | null, by: number) => (value === null ? null : Math.max(0, value + by));
  let categories = counts.categories;
  // Read and written as own keys: a category may be named `__proto__` or `constructor`.
  const current = category !== null && Object.hasOwn(categories, category) ? categories[category] : undefined;
  if (category !== null && (current || counts.total !== null)) {
    const base = current ?? { unread: 0, unseen: 0, total: 0 };
    const figures = {
      unread: Math.max(0, base.unread + add.unread),
      unseen: Math.max(0, base.unseen + add.unseen),
      total: Math.max(0, base.total + add.total),
    };
    categories = { ...categories, ...Object.fromEntries([[category, figures]]) };
  }
  return {
    unread: Math.max(0, counts.unread + add.unread),
    unseen: plus(counts.unseen, add.unseen),
    total: plus(counts.total, add.total),
    categories,
  };
};

const difference = (after: FeedCounts, before: FeedCounts): FeedCounts => ({
  unread: after.unread - before.unread,
  unseen: after.unseen - before.unseen,
  total: after.total - before.total,
});

export class InboxStore {
  /**
   * The service's view as last fetched and updated by confirmed changes and frames, newest first; items that
   * left the view (archived, snoozed) stay, out of sight, so that they come back at once when they return.
   */
  private items: InboxItem[] = [];
  private counts: InboxCountsView = NO_COUNTS;
  /** Whether the service has `GET /notifications/counts` (learnt from its first answer). */
  private countsRoute: 'unknown' | 'yes' | 'no' = 'unknown';
  private filter: InboxFilter;
  /** Raised by `setFilter`: answers to reads made for an earlier view are dropped. */
  private generation = 0;
  private cursor: string | null = null;
  private status: InboxSnapshot['status'] = 'idle';
  private error: NotifyError | undefined;
  private readonly pending: Pending[] = [];
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  /** An item the next refresh must read down to (one that came back into the view, older than its head). */
  private reach: string | undefined;
  private readonly listeners = new Set<(snapshot: InboxSnapshot) => void>();
  private readonly detach: (() => void)[] = [];
  private snapshot: InboxSnapshot;

  constructor(private readonly options: InboxOptions) {
    this.filter = Object.freeze({ ...options.filter });
    this.snapshot = this.compute();
    const { realtime } = options;
    if (realtime) {
      // A notification frame does not say whether it made a feed item (in_app): the feed's head does.
      // A new session (first connect, or one that could not resume) may have missed frames.
      const stale = () => {
        if (this.status !== 'idle') void this.refresh();
      };
      this.detach.push(realtime.on('notification', stale));
      this.detach.push(realtime.on('session', ({ resumed }) => resumed || stale()));
      // Changes made on another device (or by a wake-up): shown at once, then the exact counts fetched.
      this.detach.push(realtime.on('notificationState', (frame) => this.applyState(frame)));
      this.detach.push(realtime.on('notificationBulk', (frame) => this.applyBulk(frame)));
    }
  }

  /**
   * Calls `listener` with the snapshot now and after every change; returns the function that stops it. React
   * ignores the argument, Svelte's `$store` reads it.
   */
  readonly subscribe = (listener: (snapshot: InboxSnapshot) => void): (() => void) => {
    this.listeners.add(listener);
    listener(this.snapshot);
    return () => {
      this.listeners.delete(listener);
    };
  };

  /** The current state, frozen: the same object until something changes. */
  readonly getSnapshot = (): InboxSnapshot => this.snapshot;

  /** Loads the view's first page and the counts. */
  load(): Promise<void> {
    if (this.status === 'idle') {
      this.status = 'loading';
      this.publish();
    }
    return this.refresh();
  }

  /** Lists another view (a tab): its first page is fetched; changes not yet answered stay shown. */
  setFilter(filter: InboxFilter): Promise<void> {
    this.filter = Object.freeze({ ...filter });
    this.generation++;
    this.items = [];
    this.cursor = null;
    this.status = 'loading';
    this.publish();
    return this.refresh();
  }

  /**
   * Fetches the view's head and the counts again and merges them (older pages already loaded stay).
   * Calls made while one runs are coalesced into one more run.
   */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.refreshAgain = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      try {
        do {
          this.refreshAgain = false;
          await this.fetchHead();
        } while (this.refreshAgain);
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /** Appends the next older page. */
  async loadMore(): Promise<void> {
    if (!this.cursor) return;
    const generation = this.generation;
    const page = await this.options.api.getFeed({ ...this.query(), cursor: this.cursor });
    if (generation !== this.generation) return;
    this.merge(page.items.map(toInboxItem));
    this.cursor = page.next_cursor;
    this.publish();
  }

  /** Shows the item read at once; restores it (and the count) if the service refuses, then rethrows. */
  async markRead(id: string): Promise<void> {
    if (this.shown(id)?.read_at) return;
    const at = now();
    await this.change(
      { applies: (item) => item.id === id, change: (item) => ({ ...item, read_at: item.read_at ?? at }) },
      () => this.options.api.markRead(id),
      (result) => {
        const known = this.known(id);
        if (known) this.update({ ...known, read_at: known.read_at ?? result.read_at });
        // Not loaded here (e.g. the id of a toast): only the service knows whether it counted as unread.
        else if (this.status !== 'idle') void this.refresh();
      },
    );
  }

  /** Marks items seen (shown to the user), e.g. those an open inbox panel shows. */
  async markSeen(ids: readonly string[]): Promise<void> {
    const unseen = ids.filter((id) => this.shown(id)?.seen_at === null);
    if (unseen.length === 0) return;
    const at = now();
    await this.change(
      {
        applies: (item) => unseen.includes(item.id),
        change: (item) => ({ ...item, seen_at: item.seen_at ?? at }),
      },
      () => this.options.api.markSeen(unseen),
      (states) => {
        for (const state of states) this.confirm(state);
      },
    );
  }

  /** Hides the item at once (archived); shows it again if the service refuses, then rethrows. */
  archive(id: string): Promise<void> {
    const at = now();
    return this.changeOne(
      id,
      (item) => ({ ...item, archived_at: item.archived_at ?? at }),
      () => this.options.api.archive(id),
    );
  }

  /** Brings an archived item back at once, in its place; hides it again if the service refuses. */
  unarchive(id: string): Promise<void> {
    return this.changeOne(
      id,
      (item) => ({ ...item, archived_at: null }),
      () => this.options.api.unarchive(id),
    );
  }

  /** Hides the item at once until `until` (snoozed); shows it again if the service refuses, then rethrows. */
  snooze(id: string, until: Date | string): Promise<void> {
    const at = typeof until === 'string' ? until : until.toISOString();
    return this.changeOne(
      id,
      (item) => ({ ...item, snoozed_until: at }),
      () => this.options.api.snooze(id, until),
    );
  }

  /**
   * Records a click on the item (`actionId`: one of its `actions`; absent: the item itself): shown at once as
   * clicked, seen and read (the first click is kept); undone if the service refuses, then rethrows.
   */
  interact(id: string, actionId?: string): Promise<void> {
    const at = now();
    return this.changeOne(
      id,
      (item) =>
        item.interacted_at
          ? item
          : {
              ...item,
              interacted_at: at,
              interacted_action: actionId ?? null,
              seen_at: item.seen_at ?? at,
              read_at: item.read_at ?? at,
            },
      () => this.options.api.interact(id, actionId),
    );
  }

  /** Shows every item of the default feed read at once; restores them if the service refuses, then rethrows. */
  markAllRead(): Promise<void> {
    return this.bulkChange({ action: 'mark_read' }, () => this.options.api.markAllRead());
  }

  /** Marks every item of the default feed seen (the badge of "new" items cleared). */
  markAllSeen(): Promise<void> {
    return this.bulk({ action: 'mark_seen' });
  }

  /**
   * Marks seen, marks read or archives every item of the default feed, those older than `before`, or those of
   * one `category`: shown at once, undone if the service refuses; items arriving meanwhile are not swept up.
   */
  bulk(scope: BulkChangeScope): Promise<void> {
    return this.bulkChange(scope, () => this.options.api.bulkChange(scope));
  }

  /** Stops listening to the realtime client. */
  destroy(): void {
    for (const off of this.detach.splice(0)) off();
    this.listeners.clear();
  }

  // -------------------------------------------------------------------------------------------------------

  private query(): FeedQuery {
    return { ...this.filter, limit: this.options.pageSize ?? 20 };
  }

  private known(id: string): InboxItem | undefined {
    return this.items.find((item) => item.id === id);
  }

  /** The item as shown (changes not yet answered applied), loaded or kept out of sight. */
  private shown(id: string): InboxItem | undefined {
    const item = this.known(id);
    return item && this.withPending(item);
  }

  private withPending(item: InboxItem): InboxItem {
    let shown = item;
    for (const pending of this.pending) if (pending.applies(shown)) shown = pending.change(shown);
    return shown;
  }

  /** Replaces a loaded item by its next version; the counts follow the difference. */
  private update(next: InboxItem): void {
    const index = this.items.findIndex((item) => item.id === next.id);
    const before = this.items[index];
    if (!before) return;
    this.items[index] = Object.freeze(next);
    this.counts = addCounts(this.counts, next.category, difference(countsOf(next), countsOf(before)));
  }

  /** A confirmed state (a REST answer): applied unless a newer one is already known. */
  private confirm(state: StateOf): void {
    const known = this.known(state.id);
    if (known && !isStale(known, state.revision)) this.update(withStates(known, state));
  }

  private async change<T>(
    pending: Pending,
    send: () => Promise<T>,
    confirm: (result: T) => void,
  ): Promise<void> {
    this.pending.push(pending);
    this.publish();
    try {
      confirm(await send());
    } finally {
      this.pending.splice(this.pending.indexOf(pending), 1);
      this.publish();
    }
  }

  /** One item's change: shown at once, then the service's answer applied (or the item fetched to show it). */
  private changeOne(
    id: string,
    change: (item: InboxItem) => InboxItem,
    send: () => Promise<StateOf>,
  ): Promise<void> {
    return this.change({ applies: (item) => item.id === id, change }, send, (state) => {
      if (this.known(state.id)) this.confirm(state);
      else if (this.status !== 'idle') void this.refreshTo(this.returns(state) ? id : undefined);
    });
  }

  private async bulkChange(scope: BulkChangeScope, send: () => Promise<unknown>): Promise<void> {
    // Items that arrive during the call are not part of it: only those up to the newest one loaded now.
    const upTo = this.items[0]?.id;
    const at = now();
    const { before, category } = scope;
    const applies = (item: InboxItem) =>
      upTo !== undefined &&
      !olderThan(upTo, item.id) &&
      inDefaultFeed(item) &&
      (before === undefined || olderThan(item.id, before)) &&
      (category === undefined || item.category === category);
    const change = (item: InboxItem): InboxItem =>
      scope.action === 'mark_read'
        ? { ...item, read_at: item.read_at ?? at }
        : scope.action === 'mark_seen'
          ? { ...item, seen_at: item.seen_at ?? at }
          : { ...item, archived_at: item.archived_at ?? at };
    const counts: Counted[] =
      scope.action === 'mark_read' ? ['unread'] : scope.action === 'mark_seen' ? ['unseen'] : [...COUNTED];
    await this.change(
      { applies, change, ...(before === undefined ? { clears: { counts, category } } : {}) },
      send,
      () => {
        for (const item of this.items.filter(applies)) this.update(change(item));
      },
    );
    // The exact counts (items may have arrived meanwhile, and older unloaded ones were changed too).
    await this.refresh();
  }

  /**
   * Reads the view's head, and on until it meets the items already loaded: more than a page may have arrived
   * (a burst, or a resume after time away), and the items between the head's first page and the loaded ones
   * must not go missing. At most `MAX_CATCH_UP_PAGES` pages: past that, the store restarts from the head read
   * (its cursor, so `loadMore()` brings the rest). An item that came back into the view below the head
   * (`reach`) is read down to, however deep, so it shows in its place.
   */
  private async fetchHead(): Promise<void> {
    const generation = this.generation;
    const reach = this.reach;
    this.reach = undefined;
    try {
      const inViewLoaded = this.items.filter((item) => inView(this.filter, item));
      const newestLoaded = inViewLoaded[0]?.id;
      const [first, counts] = await Promise.all([this.options.api.getFeed(this.query()), this.fetchCounts()]);
      const head = first.items.map(toInboxItem);
      let cursor = first.next_cursor;
      const oldestRead = () => head[head.length - 1]?.id;
      const meetsLoaded = () => {
        const oldest = oldestRead();
        return newestLoaded === undefined || (oldest !== undefined && !olderThan(newestLoaded, oldest));
      };
      const reached = () => {
        const oldest = oldestRead();
        return reach === undefined || (oldest !== undefined && !olderThan(reach, oldest));
      };
      for (let pages = 1; cursor && ((!meetsLoaded() && pages < MAX_CATCH_UP_PAGES) || !reached()); pages++) {
        const page = await this.options.api.getFeed({ ...this.query(), cursor });
        head.push(...page.items.map(toInboxItem));
        cursor = page.next_cursor;
      }
      if (generation !== this.generation) return;
      const oldest = oldestRead();
      const listed = new Set(head.map((item) => item.id));
      // Older pages already loaded stay when the head reaches them; items out of sight stay (they may come
      // back); anything else the head no longer lists has left the view or expired.
      const keepsOlder = oldest !== undefined && meetsLoaded() && cursor !== null;
      const kept = this.items.filter(
        (item) =>
          !listed.has(item.id) && (!inView(this.filter, item) || (keepsOlder && olderThan(item.id, oldest))),
      );
      const olderKept = kept.some((item) => inView(this.filter, item));
      const previous = this.items;
      this.items = kept;
      this.merge(head, previous);
      if (!olderKept) this.cursor = cursor;
      this.counts = counts;
      this.status = 'ready';
      this.error = undefined;
    } catch (error) {
      if (generation !== this.generation) return;
      this.status = 'error';
      this.error = error as NotifyError;
    }
    this.publish();
  }

  /** The counts: from `GET /notifications/counts`, or from the unread count where the service has no such route. */
  private async fetchCounts(): Promise<InboxCountsView> {
    if (this.countsRoute !== 'no') {
      try {
        const counts = await this.options.api.getCounts();
        this.countsRoute = 'yes';
        return { ...counts, categories: counts.categories ?? {} };
      } catch (error) {
        const noRoute = error instanceof NotifyError && (error.status === 404 || error.status === 405);
        if (this.countsRoute === 'yes' || !noRoute) throw error;
        this.countsRoute = 'no';
      }
    }
    return { ...NO_COUNTS, unread: await this.options.api.getUnreadCount() };
  }

  /** Only the counts again (after a frame whose item is known here and numbered). */
  private async refreshCounts(): Promise<void> {
    try {
      const counts = await this.fetchCounts();
      this.counts = counts;
    } catch {
      // The next refresh corrects them; a failed read of counts alone does not make the inbox an error.
      return;
    }
    this.publish();
  }

  /** Adds fetched items (a newer revision known here wins), keeping the order newest first. */
  private merge(fetched: readonly InboxItem[], previous: readonly InboxItem[] = this.items): void {
    const known = new Map(previous.map((item) => [item.id, item]));
    const byId = new Map(this.items.map((item) => [item.id, item]));
    for (const item of fetched) {
      const before = known.get(item.id);
      // A read that started before a numbered frame arrived answers with the older state: the frame's stays.
      byId.set(item.id, before && (sameJson(before, item) || isStale(before, item.revision)) ? before : item);
    }
    this.items = [...byId.values()].sort(newestFirst);
  }

  /** Is `id` within the loaded part of the view (where an item that comes back must show)? */
  private withinLoaded(id: string): boolean {
    if (this.cursor === null) return true;
    const loaded = this.items.filter((item) => inView(this.filter, item));
    const oldest = loaded[loaded.length - 1];
    return oldest !== undefined && !olderThan(id, oldest.id);
  }

  /**
   * Whether an item not loaded here, with these states, belongs in the loaded part of the view (its content is
   * unknown: the state filter decides, the category and tag are the head's to tell).
   */
  private returns(state: StateOf): boolean {
    return (
      inView({ ...(this.filter.state ? { state: this.filter.state } : {}) }, { ...PLACEHOLDER, ...state }) &&
      this.withinLoaded(state.id)
    );
  }

  /** A `notification.state` frame: the item's states after a change made anywhere. */
  private applyState(frame: StateOf): void {
    if (this.status === 'idle') return;
    const known = this.known(frame.id);
    if (known) {
      if (isStale(known, frame.revision)) return;
      this.update(withStates(known, frame));
      this.publish();
      // Numbered frames are exact; without numbers a frame may be older than what the head now says.
      if (frame.revision != null) void this.refreshCounts();
      else void this.refresh();
      return;
    }
    // Not here: it may have come back into the view (woken, unarchived) where it must show, however deep.
    void this.refreshTo(this.returns(frame) ? frame.id : undefined);
  }

  /** A `notification.bulk` frame: the items named, or those of the feed older than `before` (or all). */
  private applyBulk(frame: NotificationBulkFrame & { readonly category?: string | null }): void {
    if (this.status === 'idle') return;
    const { ids, before, category } = frame;
    const matches = (item: InboxItem) =>
      (ids
        ? ids.includes(item.id)
        : inDefaultFeed(item) && (before === null || olderThan(item.id, before))) &&
      (category == null || item.category === category);
    for (const item of this.items.filter(matches)) {
      if (frame.change === 'archived') this.update({ ...item, archived_at: item.archived_at ?? frame.at });
      else if (frame.change === 'seen') this.update({ ...item, seen_at: item.seen_at ?? frame.at });
      else if (frame.change === 'read') this.update({ ...item, read_at: item.read_at ?? frame.at });
    }
    this.publish();
    // Items that arrived during the change are not part of it, and older unloaded ones are: the exact state.
    void this.refresh();
  }

  /** Refresh, reading down to `reach` when given. */
  private refreshTo(reach: string | undefined): Promise<void> {
    if (reach !== undefined && (this.reach === undefined || olderThan(reach, this.reach))) this.reach = reach;
    return this.refresh();
  }

  private compute(): InboxSnapshot {
    const previous = new Map(this.snapshot?.items.map((item) => [item.id, item]));
    const shownAll = this.items.map((item) => this.withPending(item));
    const items = Object.freeze(
      shownAll
        .filter((item) => inView(this.filter, item))
        .map((item) => {
          const before = previous.get(item.id);
          return before && (before === item || sameJson(before, item)) ? before : Object.freeze(item);
        }),
    );
    let counts = this.counts;
    this.items.forEach((item, index) => {
      const shown = shownAll[index] as InboxItem;
      if (shown !== item)
        counts = addCounts(counts, item.category, difference(countsOf(shown), countsOf(item)));
    });
    // A bulk change over the whole feed (or a category) empties its counts but for items that arrived since.
    for (const { clears } of this.pending) {
      if (!clears) continue;
      const left = (field: Counted, category?: string) =>
        shownAll.filter(
          (item) => countsOf(item)[field] === 1 && (category === undefined || item.category === category),
        ).length;
      const categories = { ...counts.categories };
      const next: Record<Counted, number | null> = {
        unread: counts.unread,
        unseen: counts.unseen,
        total: counts.total,
      };
      for (const field of clears.counts) {
        for (const [name, figures] of Object.entries(categories)) {
          if (clears.category !== undefined && name !== clears.category) continue;
          const remaining = left(field, name);
          if (clears.category !== undefined && next[field] !== null)
            next[field] = Math.max(0, (next[field] as number) - (figures[field] - remaining));
          Object.defineProperty(categories, name, {
            value: { ...figures, [field]: remaining },
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
        if (clears.category === undefined && next[field] !== null) next[field] = left(field);
      }
      counts = { unread: next.unread ?? 0, unseen: next.unseen, total: next.total, categories };
    }
    const snapshot: InboxSnapshot = {
      items,
      unreadCount: counts.unread,
      counts,
      filter: this.filter,
      status: this.status,
      error: this.error,
      hasMore: this.cursor !== null,
    };
    const last = this.snapshot;
    if (
      last &&
      last.items.length === items.length &&
      last.items.every((item, index) => item === items[index]) &&
      sameJson(last.counts, counts) &&
      last.filter === snapshot.filter &&
      last.status === snapshot.status &&
      last.error === snapshot.error &&
      last.hasMore === snapshot.hasMore
    )
      return last;
    return Object.freeze({ ...snapshot, counts: Object.freeze(counts) });
  }

  private publish(): void {
    const next = this.compute();
    if (next === this.snapshot) return;
    this.snapshot = next;
    for (const listener of [...this.listeners]) {
      try {
        listener(next);
      } catch (error) {
        // One failing view must not stop the others; report it where apps see it.
        setTimeout(() => {
          throw error;
        });
      }
    }
  }
}

/**
 * The fields a state frame or answer lacks, for judging whether its item belongs to a view (the fields a service
 * adds to feed items read as null or [] here, whatever the version of Receiver).
 */
const PLACEHOLDER: InboxItem = toInboxItem({
  id: '',
  notification_id: '',
  source: '',
  event_type: '',
  title: '',
  body: '',
  data: {},
  priority: 'normal',
  channels: [],
  created_at: '',
  read_at: null,
  expires_at: null,
  seen_at: null,
  archived_at: null,
  snoozed_until: null,
});
