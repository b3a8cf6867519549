import { HttpClient, type HttpOptions, newIdempotencyKey } from './http.js';
import { type TokenProvider, type TokenSource, tokenSourceOf } from './token.js';
import type {
  BulkChange,
  BulkChangeScope,
  Device,
  DeviceRequest,
  FeedPage,
  FeedStateFilter,
  InboxCounts,
  ItemList,
  ItemPage,
  ItemState,
  ItemStateOf,
  MarkedSeen,
  NotificationAccepted,
  NotificationRequest,
  PreferenceDefaults,
  Preferences,
  PreferencesRequest,
  ReadAllResult,
  ReadResult,
  Receiver,
  ScopePresence,
  Subscription,
  Topic,
  UserPresence,
  VapidPublicKey,
} from './wire.js';

export interface ApiOptions extends HttpOptions {
  /** Where user tokens come from; or `tokens`, to share one TokenSource with the realtime client. */
  readonly getToken?: TokenProvider;
  readonly tokens?: TokenSource;
}

export interface IdempotencyOptions {
  /** The same key within 24 h returns the first answer and does nothing again; generated when not given. */
  readonly idempotencyKey?: string;
}

/** A create that may be retried: one Idempotency-Key for every try. */
export const postWithKey = <T>(
  http: HttpClient,
  route: string,
  body: unknown,
  options: IdempotencyOptions,
): Promise<T> =>
  http.request('POST', route, { body, idempotencyKey: options.idempotencyKey ?? newIdempotencyKey() });

/** What the push helpers use of a browser's subscription (structural: the SDK also builds without DOM types). */
export interface PushSubscriptionLike {
  readonly endpoint: string;
  readonly options: { readonly applicationServerKey: ArrayBuffer | null };
  toJSON(): { endpoint?: string; expirationTime?: number | null; keys?: Record<string, string> };
  unsubscribe(): Promise<boolean>;
}

/** What the push helpers use of a `ServiceWorkerRegistration` (pass the browser's own). */
export interface PushRegistration {
  readonly pushManager: {
    getSubscription(): Promise<PushSubscriptionLike | null>;
    subscribe(options: {
      userVisibleOnly: boolean;
      applicationServerKey: Uint8Array<ArrayBuffer>;
    }): Promise<PushSubscriptionLike>;
  };
}

/** What a page's service worker container is to `reportPushClicks` (the browser's `navigator.serviceWorker`). */
export interface PushClickSource {
  addEventListener(type: 'message', listener: (event: { readonly data: unknown }) => void): void;
  removeEventListener(type: 'message', listener: (event: { readonly data: unknown }) => void): void;
}

/** A click the service worker of docs/push.md hands to the page, which holds the token to report it. */
export interface PushClick {
  readonly type: 'notify.push.click';
  readonly receiver_id: string;
  /** The button's id; null for a tap on the notification itself. */
  readonly action_id: string | null;
}

const isPushClick = (value: unknown): value is PushClick => {
  const click = value as Partial<PushClick> | null;
  return (
    click?.type === 'notify.push.click' &&
    typeof click.receiver_id === 'string' &&
    (click.action_id === null || typeof click.action_id === 'string')
  );
};

/** The click the worker put in the URL of the page it opened (no page of the app was open): null when none. */
const pushClickInUrl = (href: string | undefined): PushClick | null => {
  if (!href) return null;
  const query = new URL(href).searchParams;
  const receiverId = query.get('notify_receiver_id');
  return receiverId
    ? { type: 'notify.push.click', receiver_id: receiverId, action_id: query.get('notify_action_id') }
    : null;
};

/** base64url (the VAPID key's encoding) to bytes, in browsers without Uint8Array.fromBase64. */
const base64urlBytes = (text: string): Uint8Array<ArrayBuffer> => {
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, ''));
  return Uint8Array.from(binary, (character) => character.charCodeAt(0));
};

const sameBytes = (buffer: ArrayBuffer | null, bytes: Uint8Array): boolean => {
  if (!buffer || buffer.byteLength !== bytes.length) return false;
  const view = new Uint8Array(buffer);
  return view.every((byte, index) => byte === bytes[index]);
};

const path = (template: string, value: string) => template.replace('{}', encodeURIComponent(value));

/** What a feed read selects: absent fields select the default feed (neither archived nor snoozed), all of it. */
export interface FeedQuery {
  readonly limit?: number;
  readonly state?: FeedStateFilter;
  /** Only items of this category (exact name). */
  readonly category?: string;
  /** Only items carrying this tag. */
  readonly tag?: string;
}

/** The REST API as a signed-in user sees it. Every method throws NotifyError on failure. */
export class NotifyApi {
  protected readonly http: HttpClient;

  constructor(options: ApiOptions) {
    const tokens = tokenSourceOf(options);
    this.http = new HttpClient(options, (force) => tokens.get(force));
  }

  /**
   * One page of the feed, newest first: the default feed (neither archived nor snoozed), or one `state`; only
   * one `category`, or items with one `tag`.
   */
  getFeed(options: FeedQuery & { readonly cursor?: string } = {}): Promise<FeedPage> {
    return this.http.request('GET', '/notifications', { query: { ...options } });
  }

  /** Every feed item (of `state`), newest first, fetching pages of `limit` as the loop asks for more. */
  async *feed(options: FeedQuery = {}): AsyncGenerator<Receiver, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.getFeed({ ...options, ...(cursor ? { cursor } : {}) });
      yield* page.items;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }

  /** Marks one feed item read; the first `read_at` stays. */
  markRead(receiverId: string): Promise<ReadResult> {
    return this.http.request('POST', path('/notifications/{}/read', receiverId), { idempotent: true });
  }

  markAllRead(): Promise<ReadAllResult> {
    return this.http.request('POST', '/notifications/read-all', { idempotent: true });
  }

  /** Marks up to 100 feed items seen (shown to the user); each keeps its first `seen_at`. */
  async markSeen(receiverIds: readonly string[]): Promise<readonly ItemState[]> {
    const body = { ids: [...receiverIds] };
    return (await this.http.request<MarkedSeen>('POST', '/notifications/seen', { body, idempotent: true }))
      .items;
  }

  /** Archives one feed item: out of the default feed and the unread count. */
  archive(receiverId: string): Promise<ItemState> {
    return this.http.request('POST', path('/notifications/{}/archive', receiverId), { idempotent: true });
  }

  unarchive(receiverId: string): Promise<ItemState> {
    return this.http.request('POST', path('/notifications/{}/unarchive', receiverId), { idempotent: true });
  }

  /** Hides one feed item until `until`; then it comes back unread and unseen (a `notificationState` event). */
  snooze(receiverId: string, until: Date | string): Promise<ItemState> {
    const body = { until: typeof until === 'string' ? until : until.toISOString() };
    return this.http.request('POST', path('/notifications/{}/snooze', receiverId), {
      body,
      idempotent: true,
    });
  }

  /**
   * Marks seen, marks read or archives every item of the default feed, or those older than `before`, or those of
   * one `category`.
   */
  bulkChange(body: BulkChangeScope): Promise<BulkChange> {
    return this.http.request('POST', '/notifications/bulk', { body, idempotent: true });
  }

  /**
   * Records a click on the item (`actionId`: which button; absent: the item itself), which also marks it seen and
   * read; the first click is the one kept. The sender learns of it as a `notify.notification.interacted` event.
   */
  interact(receiverId: string, actionId?: string): Promise<ItemStateOf> {
    return this.http.request('POST', path('/notifications/{}/interact', receiverId), {
      body: actionId === undefined ? {} : { action_id: actionId },
      idempotent: true,
    });
  }

  /** Unseen, unread and total items of the default feed, overall and per category. */
  getCounts(): Promise<InboxCounts> {
    return this.http.request('GET', '/notifications/counts');
  }

  async getUnreadCount(): Promise<number> {
    return (await this.http.request<{ count: number }>('GET', '/notifications/unread-count')).count;
  }

  /** Creates a notification (a user token notifies only its own user, named or not); retried safely with an Idempotency-Key. */
  createNotification(
    body: NotificationRequest,
    options: IdempotencyOptions = {},
  ): Promise<NotificationAccepted> {
    return postWithKey(this.http, '/notifications', body, options);
  }

  getPresence(userId: string): Promise<UserPresence> {
    return this.http.request('GET', path('/presence/{}', userId));
  }

  /**
   * One page of a room's members (`room:<roomId>`), sorted by user id: a room of up to 1,000 connections in one
   * page; `next_cursor` is null on the last page.
   */
  getRoomPresence(
    roomId: string,
    options: { readonly cursor?: string; readonly limit?: number } = {},
  ): Promise<ScopePresence> {
    return this.http.request('GET', '/presence', { query: { scope: `room:${roomId}`, ...options } });
  }

  /** Every member of a room, sorted by user id, fetching pages as the loop asks for more. */
  async *roomPresence(roomId: string): AsyncGenerator<ScopePresence['members'][number], void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.getRoomPresence(roomId, cursor ? { cursor } : {});
      yield* page.members;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }

  getTopic(name: string): Promise<Topic> {
    return this.http.request('GET', path('/topics/{}', name));
  }

  /** Subscribes the user to a topic (its notifications reach the user); subscribing twice returns the same. */
  createSubscription(topic: string): Promise<Subscription> {
    return this.http.request('POST', '/subscriptions', { body: { topic }, idempotent: true });
  }

  async listSubscriptions(): Promise<readonly Subscription[]> {
    return (await this.http.request<ItemList<Subscription>>('GET', '/subscriptions')).items;
  }

  deleteSubscription(id: string): Promise<void> {
    return this.http.request('DELETE', path('/subscriptions/{}', id));
  }

  /**
   * Registers (or updates) a push device for this user: a provider's token, or a browser's subscription
   * (`subscribeToPush` does that one for you). docs/push.md, "Devices".
   */
  registerDevice(device: DeviceRequest): Promise<Device> {
    return this.http.request('POST', '/devices', { body: device, idempotent: true });
  }

  /** Removes one of this user's devices (a Web Push device's token is its subscription's endpoint). */
  unregisterDevice(token: string): Promise<void> {
    return this.http.request('DELETE', '/devices', { body: { token } });
  }

  /** The app's VAPID public key, which browsers subscribe with; `appId` absent: the default app. */
  getVapidPublicKey(appId?: string): Promise<VapidPublicKey> {
    return this.http.request('GET', '/push/vapid-public-key', { query: { app_id: appId } });
  }

  /**
   * Subscribes a service worker registration to Web Push with the app's VAPID key and registers the
   * subscription as this user's device. A subscription the registration already holds is reused when it was
   * made with the same key, and replaced when not (a browser keeps one per registration). Needs the
   * notification permission (the browser asks on first use, or `Notification.requestPermission()` first).
   */
  async subscribeToPush(
    registration: PushRegistration,
    options: { readonly appId?: string } = {},
  ): Promise<Device> {
    const { app_id, public_key } = await this.getVapidPublicKey(options.appId);
    const applicationServerKey = base64urlBytes(public_key);
    let subscription = await registration.pushManager.getSubscription();
    if (subscription && !sameBytes(subscription.options.applicationServerKey, applicationServerKey)) {
      await subscription.unsubscribe();
      subscription = null;
    }
    subscription ??= await registration.pushManager.subscribe({
      userVisibleOnly: true,
      applicationServerKey,
    });
    const { endpoint, expirationTime, keys } = subscription.toJSON();
    if (!endpoint || !keys?.p256dh || !keys.auth)
      throw new Error('The browser gave a subscription without keys');
    return this.registerDevice({
      platform: 'web',
      provider: 'webpush',
      app_id,
      subscription: {
        endpoint,
        expirationTime: expirationTime ?? null,
        keys: { p256dh: keys.p256dh, auth: keys.auth },
      },
    });
  }

  /** Ends the registration's Web Push subscription and removes its device; false when there was none. */
  async unsubscribeFromPush(registration: PushRegistration): Promise<boolean> {
    const subscription = await registration.pushManager.getSubscription();
    if (!subscription) return false;
    await this.unregisterDevice(subscription.endpoint);
    return subscription.unsubscribe();
  }

  /**
   * Reports the clicks on Web Push notifications that the service worker of docs/push.md hands over (it holds no
   * token; the page does): each `notify.push.click` message it posts to this page, and the click in this page's
   * URL (`notify_receiver_id`, `notify_action_id`) when the worker opened the app for it. Each is `interact`,
   * which records the click (and the button) once and marks the item seen and read; the sender learns of it on
   * the bus. `onError` gets a report that failed. Returns the function that stops listening.
   */
  reportPushClicks(
    options: {
      readonly serviceWorker?: PushClickSource;
      readonly url?: string;
      readonly onError?: (error: unknown, click: PushClick) => void;
    } = {},
  ): () => void {
    const page = globalThis as {
      navigator?: { serviceWorker?: PushClickSource };
      location?: { href: string };
    };
    const container = options.serviceWorker ?? page.navigator?.serviceWorker;
    const report = (click: PushClick) => {
      this.interact(click.receiver_id, click.action_id ?? undefined).catch((error: unknown) =>
        options.onError?.(error, click),
      );
    };
    const fromUrl = pushClickInUrl(options.url ?? page.location?.href);
    if (fromUrl) report(fromUrl);
    const listener = (event: { readonly data: unknown }) => {
      if (isPushClick(event.data)) report(event.data);
    };
    container?.addEventListener('message', listener);
    return () => container?.removeEventListener('message', listener);
  }

  /** Every device of this user: GET /devices is paged, so it follows `next_cursor` to the last page. */
  async listDevices(): Promise<readonly Device[]> {
    const devices: Device[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.http.request<ItemPage<Device>>('GET', '/devices', { query: { cursor } });
      devices.push(...page.items);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    return devices;
  }

  /** @deprecated The same as unregisterDevice, by its earlier name. */
  deleteDevice(token: string): Promise<void> {
    return this.unregisterDevice(token);
  }

  /** This user's preferences (empty lists and `updated_at: null` until it sets any). docs/preferences.md. */
  getPreferences(): Promise<Preferences> {
    return this.http.request('GET', '/preferences');
  }

  /** Replaces this user's rules and muted topics (a PUT: safe to retry). */
  setPreferences(body: PreferencesRequest): Promise<Preferences> {
    return this.http.request('PUT', '/preferences', { body, idempotent: true });
  }

  /** The service defaults, including the required types a user cannot turn off (part of GET /preferences). */
  async getPreferenceDefaults(): Promise<PreferenceDefaults> {
    return (await this.getPreferences()).defaults;
  }
}
