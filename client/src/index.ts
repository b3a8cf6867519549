/**
 * @notify/client — the app-side SDK: realtime connection, REST API and inbox store.
 * The service-side client for backends is `@notify/client/service`.
 */
import { NotifyApi } from './api.js';
import type { RetryOptions } from './http.js';
import { InboxStore } from './inbox.js';
import { RealtimeClient, type RealtimeOptions } from './realtime.js';
import { type TokenProvider, TokenSource } from './token.js';

export {
  type ApiOptions,
  type IdempotencyOptions,
  NotifyApi,
  type PushClick,
  type PushClickSource,
  type PushRegistration,
  type PushSubscriptionLike,
} from './api.js';
export type { BackoffOptions } from './backoff.js';
export { NotifyError } from './errors.js';
export type { RetryOptions } from './http.js';
export { type InboxOptions, type InboxSnapshot, InboxStore } from './inbox.js';
export {
  type ConnectionState,
  RealtimeClient,
  type RealtimeEvents,
  type RealtimeOptions,
  type SessionInfo,
  type StateChange,
  type WebSocketConstructor,
  type WebSocketLike,
} from './realtime.js';
export { type TokenProvider, TokenSource } from './token.js';
export type * from './wire.js';

export interface NotifyOptions extends Omit<RealtimeOptions, 'url' | 'tokens' | 'getToken'> {
  /** The REST base, ending in `/api/v1`. */
  readonly apiUrl: string;
  /** The WebSocket endpoint, ending in `/ws`. */
  readonly wsUrl: string;
  /** Returns a user token of your IdP (called again before it expires, and when the service refuses it). */
  readonly getToken: TokenProvider;
  readonly fetch?: typeof fetch;
  readonly retry?: RetryOptions;
  /** Inbox page size (default 20). */
  readonly pageSize?: number;
}

export interface Notify {
  readonly api: NotifyApi;
  readonly realtime: RealtimeClient;
  readonly inbox: InboxStore;
  /** Loads the inbox and connects. */
  start(): Promise<void>;
  /** Disconnects and stops the inbox listening (final: make a new one to start again). */
  stop(): void;
}

/** The three parts wired together, sharing one token source. */
export const createNotify = (options: NotifyOptions): Notify => {
  const tokens = new TokenSource(options.getToken);
  const api = new NotifyApi({ ...options, tokens });
  const realtime = new RealtimeClient({ ...options, url: options.wsUrl, tokens });
  const inbox = new InboxStore({
    api,
    realtime,
    ...(options.pageSize ? { pageSize: options.pageSize } : {}),
  });
  return {
    api,
    realtime,
    inbox,
    start() {
      realtime.connect();
      return inbox.load();
    },
    stop() {
      realtime.disconnect();
      inbox.destroy();
    },
  };
};
