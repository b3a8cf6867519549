/**
 * The inbox: the default feed's items (neither archived nor snoozed) and the unread count, kept in sync by
 * realtime frames — new notifications, and state changes made on any of the user's devices — with optimistic
 * mark-read, archive and snooze.
 * Framework-free, in the shape React's `useSyncExternalStore(inbox.subscribe, inbox.getSnapshot)` expects
 * (Vue, Svelte or plain DOM code subscribe the same way).
 */
import type { NotifyApi } from './api.js';
import type { NotifyError } from './errors.js';
import type { RealtimeClient } from './realtime.js';
import type { NotificationBulkFrame, NotificationStateFrame, Receiver } from './wire.js';

export interface InboxSnapshot {
  /** The default feed, newest first, with optimistic reads, archives and snoozes applied. */
  readonly items: readonly Receiver[];
  readonly unreadCount: number;
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
}

/** The most pages a refresh reads to meet the items already loaded (at 20 a page, a gap of 200 items). */
const MAX_CATCH_UP_PAGES = 10;

/** Receiver ids are UUID v7 (time-ordered): their text order is their age order. */
const olderThan = (id: string, than: string) => id < than;

export class InboxStore {
  /** The service's view, as last fetched and updated by confirmed writes. */
  private items: Receiver[] = [];
  private serverUnread = 0;
  private cursor: string | null = null;
  private status: InboxSnapshot['status'] = 'idle';
  private error: NotifyError | undefined;
  /** Reads sent and not yet confirmed: id → the `read_at` shown meanwhile. */
  private readonly reading = new Map<string, string>();
  /** A read-all sent and not yet confirmed: items up to this id show as read. */
  private readingAll: { readonly upTo: string; readonly at: string } | undefined;
  /** Archives and snoozes sent and not yet confirmed: not shown meanwhile. */
  private readonly hiding = new Set<string>();
  private refreshing: Promise<void> | undefined;
  private refreshAgain = false;
  private readonly listeners = new Set<() => void>();
  private readonly detach: (() => void)[] = [];
  private snapshot: InboxSnapshot;

  constructor(private readonly options: InboxOptions) {
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
      // Changes made on another device (or by a wake-up): shown at once, then the exact count and head fetched.
      this.detach.push(realtime.on('notificationState', (frame) => this.applyState(frame)));
      this.detach.push(realtime.on('notificationBulk', (frame) => this.applyBulk(frame)));
    }
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** The current state; the same object until something changes. */
  readonly getSnapshot = (): InboxSnapshot => this.snapshot;

  /** Loads the first page and the unread count. */
  load(): Promise<void> {
    if (this.status === 'idle') {
      this.status = 'loading';
      this.publish();
    }
    return this.refresh();
  }

  /**
   * Fetches the feed's head and the unread count again and merges them (older pages already loaded stay).
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
    const page = await this.options.api.getFeed({ cursor: this.cursor, limit: this.pageSize() });
    const known = new Set(this.items.map((item) => item.id));
    this.items = [...this.items, ...page.items.filter((item) => !known.has(item.id))];
    this.cursor = page.next_cursor;
    this.publish();
  }

  /** Shows the item read at once; restores it (and the count) if the service refuses, then rethrows. */
  async markRead(id: string): Promise<void> {
    const shown = this.snapshot.items.find((item) => item.id === id);
    if (shown?.read_at) return;
    this.reading.set(id, new Date().toISOString());
    this.publish();
    try {
      const result = await this.options.api.markRead(id);
      const index = this.items.findIndex((item) => item.id === id);
      const item = this.items[index];
      if (item && !item.read_at) {
        this.items[index] = { ...item, read_at: result.read_at };
        this.serverUnread = Math.max(0, this.serverUnread - 1);
      } else if (!item && this.status !== 'idle') {
        // Not loaded here (e.g. the id of a toast): only the service knows whether it counted as unread.
        void this.refresh();
      }
    } finally {
      this.reading.delete(id);
      this.publish();
    }
  }

  /** Shows every loaded item read at once; restores them if the service refuses, then rethrows. */
  async markAllRead(): Promise<void> {
    const newest = this.items[0];
    if (!newest) return;
    const at = new Date().toISOString();
    this.readingAll = { upTo: newest.id, at };
    this.publish();
    try {
      await this.options.api.markAllRead();
      this.items = this.items.map((item) =>
        item.read_at || olderThan(newest.id, item.id) ? item : { ...item, read_at: at },
      );
    } finally {
      this.readingAll = undefined;
      this.publish();
    }
    // The exact count (items may have arrived meanwhile, and older unloaded ones were marked too).
    await this.refresh();
  }

  /** Marks items seen (shown to the user), e.g. those an open inbox panel shows. */
  async markSeen(ids: readonly string[]): Promise<void> {
    const unseen = ids.filter((id) => this.items.some((item) => item.id === id && !item.seen_at));
    if (unseen.length === 0) return;
    const states = await this.options.api.markSeen(unseen);
    const seenAt = new Map(states.map((state) => [state.id, state.seen_at]));
    this.items = this.items.map((item) =>
      seenAt.has(item.id) ? { ...item, seen_at: seenAt.get(item.id) ?? null } : item,
    );
    this.publish();
  }

  /** Marks every item of the default feed seen (the badge of "new" items cleared). */
  async markAllSeen(): Promise<void> {
    await this.options.api.bulkChange({ action: 'mark_seen' });
    await this.refresh();
  }

  /** Hides the item at once (archived); shows it again if the service refuses, then rethrows. */
  archive(id: string): Promise<void> {
    return this.hide(id, () => this.options.api.archive(id));
  }

  /** Hides the item at once until `until` (snoozed); shows it again if the service refuses, then rethrows. */
  snooze(id: string, until: Date | string): Promise<void> {
    return this.hide(id, () => this.options.api.snooze(id, until));
  }

  /** Brings an archived item back; the feed's head and count are fetched again to show it in its place. */
  async unarchive(id: string): Promise<void> {
    await this.options.api.unarchive(id);
    await this.refresh();
  }

  /** Stops listening to the realtime client. */
  destroy(): void {
    for (const off of this.detach.splice(0)) off();
    this.listeners.clear();
  }

  // -------------------------------------------------------------------------------------------------------

  private pageSize(): number {
    return this.options.pageSize ?? 20;
  }

  /**
   * Reads the feed's head, and on until it meets the items already loaded: more than a page may have arrived
   * (a burst, or a resume after time away), and the items between the head's first page and the loaded ones
   * must not go missing. At most `MAX_CATCH_UP_PAGES` pages: past that, the store restarts from the head read
   * (its cursor, so `loadMore()` brings the rest).
   */
  private async fetchHead(): Promise<void> {
    try {
      const newestLoaded = this.items[0]?.id;
      const [first, count] = await Promise.all([
        this.options.api.getFeed({ limit: this.pageSize() }),
        this.options.api.getUnreadCount(),
      ]);
      const head = [...first.items];
      let cursor = first.next_cursor;
      const meetsLoaded = () => {
        const oldest = head[head.length - 1];
        return newestLoaded === undefined || (oldest !== undefined && !olderThan(newestLoaded, oldest.id));
      };
      for (let pages = 1; cursor && !meetsLoaded() && pages < MAX_CATCH_UP_PAGES; pages++) {
        const page = await this.options.api.getFeed({ cursor, limit: this.pageSize() });
        const known = new Set(head.map((item) => item.id));
        head.push(...page.items.filter((item) => !known.has(item.id)));
        cursor = page.next_cursor;
      }
      const oldest = head[head.length - 1];
      // Keep older pages already loaded when the head reaches them; anything else the head no longer lists has
      // expired.
      const older = oldest && meetsLoaded() ? this.items.filter((item) => olderThan(item.id, oldest.id)) : [];
      this.items = [...head, ...older];
      if (older.length === 0) this.cursor = cursor;
      this.serverUnread = count;
      this.status = 'ready';
      this.error = undefined;
    } catch (error) {
      this.status = 'error';
      this.error = error as NotifyError;
    }
    this.publish();
  }

  private async hide(id: string, change: () => Promise<unknown>): Promise<void> {
    this.hiding.add(id);
    this.publish();
    try {
      await change();
      this.remove(id);
    } finally {
      this.hiding.delete(id);
      this.publish();
    }
  }

  /** Takes an item out of the list (archived or snoozed), and out of the count when it was unread. */
  private remove(id: string): void {
    const index = this.items.findIndex((item) => item.id === id);
    const item = this.items[index];
    if (!item) return;
    this.items.splice(index, 1);
    if (!item.read_at) this.serverUnread = Math.max(0, this.serverUnread - 1);
  }

  /** A `notification.state` frame: the item's states after a change made anywhere. */
  private applyState(frame: NotificationStateFrame): void {
    if (this.status === 'idle') return;
    const index = this.items.findIndex((item) => item.id === frame.id);
    const item = this.items[index];
    if (item && (frame.archived_at !== null || frame.snoozed_until !== null)) this.remove(frame.id);
    else if (item) {
      if (!item.read_at && frame.read_at) this.serverUnread = Math.max(0, this.serverUnread - 1);
      this.items[index] = { ...item, seen_at: frame.seen_at, read_at: frame.read_at };
    }
    this.publish();
    // The exact count, and an item back in the feed (unarchived, woken up) in its place.
    void this.refresh();
  }

  /** A `notification.bulk` frame: the items named, or those of the feed older than `before` (or all), of `category`. */
  private applyBulk(frame: NotificationBulkFrame): void {
    if (this.status === 'idle') return;
    const { ids, before, category } = frame;
    const matches = (item: Receiver) =>
      ids
        ? ids.includes(item.id)
        : (before === null || olderThan(item.id, before)) &&
          (category === null || item.category === category);
    for (const item of this.items.filter(matches)) {
      if (frame.change === 'archived') this.remove(item.id);
      else if (frame.change === 'seen' && !item.seen_at) this.replace({ ...item, seen_at: frame.at });
      else if (frame.change === 'read' && !item.read_at) {
        this.replace({ ...item, read_at: frame.at });
        this.serverUnread = Math.max(0, this.serverUnread - 1);
      }
    }
    this.publish();
    // Items that arrived during the change are not part of it, and older unloaded ones are: the exact state.
    void this.refresh();
  }

  private replace(item: Receiver): void {
    const index = this.items.findIndex((current) => current.id === item.id);
    if (index >= 0) this.items[index] = item;
  }

  private compute(): InboxSnapshot {
    const readingAll = this.readingAll;
    let hidden = 0;
    const shown =
      this.hiding.size === 0 ? this.items : this.items.filter((item) => !this.hiding.has(item.id));
    for (const item of this.items) if (this.hiding.has(item.id) && !item.read_at) hidden++;
    const items = shown.map((item) => {
      if (item.read_at) return item;
      const readAt =
        this.reading.get(item.id) ??
        (readingAll && !olderThan(readingAll.upTo, item.id) ? readingAll.at : undefined);
      if (readAt === undefined) return item;
      hidden++;
      return { ...item, read_at: readAt };
    });
    const unreadCount = readingAll
      ? items.filter((item) => !item.read_at).length
      : Math.max(0, this.serverUnread - hidden);
    return {
      items,
      unreadCount,
      status: this.status,
      error: this.error,
      hasMore: this.cursor !== null,
    };
  }

  private publish(): void {
    this.snapshot = this.compute();
    for (const listener of [...this.listeners]) listener();
  }
}
