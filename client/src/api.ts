import { HttpClient, type HttpOptions, newIdempotencyKey } from './http.js';
import { type TokenProvider, type TokenSource, tokenSourceOf } from './token.js';
import type {
  BulkChange,
  BulkChangeRequest,
  Device,
  DeviceRequest,
  FeedPage,
  FeedStateFilter,
  ItemList,
  ItemPage,
  ItemState,
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

const path = (template: string, value: string) => template.replace('{}', encodeURIComponent(value));

/** The REST API as a signed-in user sees it. Every method throws NotifyError on failure. */
export class NotifyApi {
  protected readonly http: HttpClient;

  constructor(options: ApiOptions) {
    const tokens = tokenSourceOf(options);
    this.http = new HttpClient(options, (force) => tokens.get(force));
  }

  /** One page of the feed, newest first: the default feed (neither archived nor snoozed), or one `state`. */
  getFeed(
    options: { readonly cursor?: string; readonly limit?: number; readonly state?: FeedStateFilter } = {},
  ): Promise<FeedPage> {
    return this.http.request('GET', '/notifications', { query: options });
  }

  /** Every feed item (of `state`), newest first, fetching pages of `limit` as the loop asks for more. */
  async *feed(
    options: { readonly limit?: number; readonly state?: FeedStateFilter } = {},
  ): AsyncGenerator<Receiver, void, undefined> {
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

  /** Marks seen, marks read or archives every item of the default feed, or those older than `before`. */
  bulkChange(body: BulkChangeRequest): Promise<BulkChange> {
    return this.http.request('POST', '/notifications/bulk', { body, idempotent: true });
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

  /** Registers (or updates) a push token for this user. */
  registerDevice(device: DeviceRequest): Promise<Device> {
    return this.http.request('POST', '/devices', { body: device, idempotent: true });
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

  deleteDevice(token: string): Promise<void> {
    return this.http.request('DELETE', '/devices', { body: { token } });
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
