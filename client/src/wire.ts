/**
 * The service's wire format as the client sees it: WebSocket frames and REST bodies (contract §3–§4).
 * Every type the SDK sends or receives lives here and nowhere else, so this module can later be generated
 * from the service's OpenAPI / AsyncAPI documents without touching the rest of the SDK.
 */

export type Priority = 'low' | 'normal' | 'high' | 'urgent';
export type DeliveryChannel = 'in_app' | 'toast' | 'realtime';
/** What a connection can set with `presence.update`. */
export type PresenceStatus = 'online' | 'away' | 'busy';
/** What presence reads answer: a user with no live connection is `offline`. */
export type PresenceState = PresenceStatus | 'offline';

// ---------------------------------------------------------------------------------------------------------
// Server → client frames

export interface NotificationFrame {
  readonly type: 'notification';
  /** The receiver id (the feed item's id, usable with `markRead`). */
  readonly id: string;
  readonly notification_id: string;
  readonly event_type: string;
  readonly source: string;
  readonly title: string;
  readonly body: string;
  readonly data: Record<string, unknown>;
  readonly priority: Priority;
  readonly created_at: string;
  /** `toast` when the notification asked for a toast, else `realtime`. */
  readonly channel: 'toast' | 'realtime';
}

export interface EventFrame {
  readonly type: 'event';
  /** `topic:<event_type>` */
  readonly channel: string;
  readonly id: string;
  readonly event_type: string;
  readonly source: string;
  readonly version: number;
  readonly data: Record<string, unknown>;
  readonly time: string;
}

export interface PresenceFrame {
  readonly type: 'presence';
  /** `room:<id>` */
  readonly scope: string;
  readonly user_id: string;
  readonly status: PresenceState;
  readonly last_seen_at: string;
  readonly change: 'join' | 'leave' | 'update';
}

export interface ErrorFrame {
  readonly type: 'error';
  /** The client frame's `id`, when the error answers one. */
  readonly id?: string;
  readonly code: string;
  readonly message: string;
}

export interface SessionFrame {
  readonly type: 'session';
  readonly session_id: string;
  readonly user_id: string;
  readonly heartbeat_interval_ms: number;
}

export interface AckFrame {
  readonly type: 'ack';
  readonly id?: string;
  /** The client frame's type. */
  readonly op: string;
  /** `reconnect`: how many missed frames follow. */
  readonly replayed?: number;
  /** `reconnect`: the session the connection now belongs to. */
  readonly session_id?: string;
  readonly channel?: string;
}

export interface HeartbeatAckFrame {
  readonly type: 'heartbeat.ack';
  readonly id?: string;
}

/** What `POST /broadcast` sends as given: any object with a string `type` other than the ones above. */
export interface BroadcastFrame {
  readonly type: string;
  readonly [field: string]: unknown;
}

export type ServerFrame =
  | NotificationFrame
  | EventFrame
  | PresenceFrame
  | ErrorFrame
  | SessionFrame
  | AckFrame
  | HeartbeatAckFrame;

/** Frame types the protocol defines; anything else is a broadcast payload. */
export const PROTOCOL_FRAME_TYPES: ReadonlySet<string> = new Set([
  'notification',
  'event',
  'presence',
  'error',
  'session',
  'ack',
  'heartbeat.ack',
]);

// ---------------------------------------------------------------------------------------------------------
// Client → server frames (every one may carry an `id`, echoed on its ack or error)

export type ClientFrame = { readonly id?: string } & (
  | { readonly type: 'auth'; readonly token: string }
  | { readonly type: 'subscribe' | 'unsubscribe'; readonly channel: string }
  | { readonly type: 'join.room'; readonly room_id: string }
  | { readonly type: 'join.topic'; readonly topic: string }
  | { readonly type: 'presence.update'; readonly status: PresenceStatus }
  | { readonly type: 'reconnect'; readonly session_id: string }
  | { readonly type: 'heartbeat' }
);

// ---------------------------------------------------------------------------------------------------------
// REST bodies

/** An error answer of the REST API. */
export interface ErrorBody {
  readonly code: string;
  readonly message: string;
  readonly request_id: string;
  /** `validation` only: which fields were wrong. */
  readonly details?: readonly { readonly field: string; readonly issue: string }[];
}

/** A feed item: one user's copy of a notification. */
export interface Receiver {
  /** The receiver id. */
  readonly id: string;
  readonly notification_id: string;
  readonly source: string;
  readonly event_type: string;
  readonly title: string;
  readonly body: string;
  readonly data: Record<string, unknown>;
  readonly priority: Priority;
  readonly channels: readonly DeliveryChannel[];
  readonly created_at: string;
  readonly read_at: string | null;
  readonly expires_at: string | null;
}

export interface FeedPage {
  /** Newest first. */
  readonly items: readonly Receiver[];
  /** Pass to the next call; null on the last page. */
  readonly next_cursor: string | null;
}

export interface ReadResult {
  readonly id: string;
  readonly read_at: string;
}

export interface ReadAllResult {
  readonly updated: number;
}

export interface UnreadCount {
  readonly count: number;
}

export interface NotificationRequest {
  readonly event_type: string;
  readonly title: string;
  /** User ids; a user token may only name itself. */
  readonly recipient_ids?: readonly string[];
  /** Topic names: every subscriber receives it (once per user). */
  readonly topics?: readonly string[];
  readonly source?: string;
  readonly body?: string;
  readonly data?: Record<string, unknown>;
  readonly priority?: Priority;
  /** Default `["in_app"]`. */
  readonly channels?: readonly DeliveryChannel[];
  /** RFC 3339. */
  readonly scheduled_at?: string | null;
  readonly expires_at?: string | null;
}

export interface NotificationAccepted {
  readonly id: string;
  readonly status: 'accepted' | 'scheduled';
  readonly recipient_count: number;
  readonly scheduled_at: string | null;
}

export interface EventRequest {
  readonly event_type: string;
  readonly source: string;
  /** Integer ≥ 1. */
  readonly version: number;
  readonly data: Record<string, unknown>;
  readonly priority?: Priority;
  readonly archive?: boolean;
}

export interface EventAccepted {
  readonly id: string;
  readonly archived: boolean;
}

export interface BroadcastRequest {
  /** `room:<id>`, `topic:<name>` or `user:<id>`; without it, every open connection. */
  readonly channel?: string;
  /** Delivered as the frame itself. */
  readonly payload: { readonly type: string; readonly [field: string]: unknown };
}

export interface BroadcastAccepted {
  readonly recipients: number;
}

export interface UserPresence {
  readonly user_id: string;
  readonly status: PresenceState;
  readonly last_seen_at: string | null;
  /** Open connections. */
  readonly connections: number;
}

export interface ScopePresence {
  readonly scope: string;
  /** Sorted by user id. */
  readonly members: readonly {
    readonly user_id: string;
    readonly status: PresenceState;
    readonly last_seen_at: string | null;
  }[];
}

export interface Topic {
  readonly name: string;
  readonly description: string | null;
  readonly created_at: string;
  readonly subscriber_count: number;
}

export interface Subscription {
  readonly id: string;
  readonly topic: string;
  readonly user_id: string;
  readonly created_at: string;
}

export type DevicePlatform = 'ios' | 'android' | 'web';

export interface DeviceRequest {
  readonly token: string;
  readonly platform: DevicePlatform;
  readonly app_id?: string;
}

export interface Device {
  readonly token: string;
  readonly platform: DevicePlatform;
  readonly app_id: string | null;
  readonly created_at: string;
}

export interface ItemList<T> {
  readonly items: readonly T[];
}
