/**
 * The service-side client, for backend services in Node (≥ 20) holding a service token: create notifications,
 * publish events, broadcast. Creates carry an Idempotency-Key (generated when not given) so that retries after a
 * network failure or a 503 never notify twice.
 */
import { type IdempotencyOptions, postWithKey } from './api.js';
import { HttpClient, type HttpOptions } from './http.js';
import { TokenSource } from './token.js';
import type {
  BroadcastAccepted,
  BroadcastRequest,
  EventAccepted,
  EventRequest,
  NotificationAccepted,
  NotificationRequest,
  PreferenceDefaults,
  PreferenceDefaultsRequest,
  Preferences,
  PreferencesRequest,
  Topic,
  TopicDeletion,
  TopicList,
  TopicRequest,
} from './wire.js';

export interface ServiceOptions extends HttpOptions {
  /** A service token (scopes `notifications:write`, `events:publish`, `broadcast:write` as needed) or a provider. */
  readonly token: string | (() => string | Promise<string>);
}

export class NotifyService {
  private readonly http: HttpClient;

  constructor(options: ServiceOptions) {
    const { token } = options;
    const tokens = new TokenSource(typeof token === 'string' ? () => token : () => token());
    this.http = new HttpClient(options, (force) => tokens.get(force));
  }

  /** `202` with the notification id; up to 10 named recipients are delivered before it, a larger fan-out after it. */
  createNotification(
    body: NotificationRequest,
    options: IdempotencyOptions = {},
  ): Promise<NotificationAccepted> {
    return postWithKey(this.http, '/notifications', body, options);
  }

  /** Puts an event on the bus (webhooks, `topic:<event_type>` subscribers). */
  publishEvent(body: EventRequest, options: IdempotencyOptions = {}): Promise<EventAccepted> {
    return postWithKey(this.http, '/events', body, options);
  }

  /**
   * Sends `payload` as a frame to a channel's connections (or every connection). Not idempotent on the service,
   * so retried only when refused with 429.
   */
  broadcast(body: BroadcastRequest): Promise<BroadcastAccepted> {
    return this.http.request('POST', '/broadcast', { body });
  }

  /** A user's preferences (`notifications:write`). */
  getPreferences(userId: string): Promise<Preferences> {
    return this.http.request('GET', '/preferences', { query: { user_id: userId } });
  }

  /** Replaces a user's preferences (`notifications:write`; a PUT: safe to retry). */
  setPreferences(userId: string, body: PreferencesRequest): Promise<Preferences> {
    return this.http.request('PUT', '/preferences', { query: { user_id: userId }, body, idempotent: true });
  }

  /** Creates a topic (any service token); a name that exists is a `conflict` error. */
  createTopic(body: TopicRequest): Promise<Topic> {
    return this.http.request('POST', '/topics', { body });
  }

  /** One page of the topics with their subscriber counts; pass `next_cursor` back for the next one. */
  listTopics(options: { readonly cursor?: string; readonly limit?: number } = {}): Promise<TopicList> {
    return this.http.request('GET', '/topics', { query: { cursor: options.cursor, limit: options.limit } });
  }

  /** Deletes a topic: gone at once, its subscriptions removed in the background (safe to retry). */
  deleteTopic(name: string): Promise<TopicDeletion> {
    return this.http.request('DELETE', `/topics/${encodeURIComponent(name)}`, { idempotent: true });
  }

  /** Replaces the defaults and required types for every user (`notifications:write`). docs/preferences.md. */
  setPreferenceDefaults(body: PreferenceDefaultsRequest): Promise<PreferenceDefaults> {
    return this.http.request('PUT', '/preferences/defaults', { body, idempotent: true });
  }
}
