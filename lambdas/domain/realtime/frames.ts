/**
 * Server-to-client WebSocket frames, exactly as contract §4 shapes them. Client frames are parsed in
 * client-frames.ts. Every frame is a JSON object with a string `type`.
 */

export type PresenceStatus = 'online' | 'away' | 'busy';
/** What GET /presence answers: a user with no live connection is `offline`. */
export type PresenceState = PresenceStatus | 'offline';

export interface NotificationFrame {
  readonly type: 'notification';
  /** The receiver id when an in-app record exists, else the notification id. */
  readonly id: string;
  readonly notification_id: string;
  readonly event_type: string;
  readonly source: string;
  readonly title: string;
  readonly body: string;
  readonly data: Record<string, unknown>;
  readonly priority: 'low' | 'normal' | 'high' | 'urgent';
  readonly created_at: string;
  readonly channel: 'toast' | 'realtime';
}

export interface EventFrame {
  readonly type: 'event';
  /** The WebSocket channel it was sent to: `topic:<event_type>`. */
  readonly channel: string;
  readonly id: string;
  readonly event_type: string;
  readonly source: string;
  readonly version: number;
  readonly data: Record<string, unknown>;
  readonly time: string;
  /** Only on a replayed event (archive replay): the frame has its own `id`, the event's is `original_id`. */
  readonly replayed?: true;
  readonly original_id?: string;
}

export interface PresenceFrame {
  readonly type: 'presence';
  /** `room:<id>`. */
  readonly scope: string;
  readonly user_id: string;
  readonly status: PresenceState;
  readonly last_seen_at: string;
  readonly change: 'join' | 'leave' | 'update';
}

export type WsErrorCode =
  | 'validation'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'payload_too_large'
  | 'token_expired'
  | 'session_expired'
  | 'rate_limited'
  | 'internal'
  | 'unavailable';

export interface ErrorFrame {
  readonly type: 'error';
  /** The client frame's `id`, when it had one. */
  readonly id?: string;
  readonly code: WsErrorCode;
  readonly message: string;
}

export interface HeartbeatAckFrame {
  readonly type: 'heartbeat.ack';
  readonly id?: string;
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
  /** `reconnect` only: how many missed frames follow the ack. */
  readonly replayed?: number;
  /** `reconnect` only: the session the connection now belongs to. */
  readonly session_id?: string;
  /** `subscribe`, `join.room`, `join.topic`, `unsubscribe`: the channel concerned. */
  readonly channel?: string;
}

/** A frame POST /broadcast sends as given: any object with a string `type`. */
export interface BroadcastFrame {
  readonly type: string;
  readonly [field: string]: unknown;
}

export type ServerFrame =
  | NotificationFrame
  | EventFrame
  | PresenceFrame
  | ErrorFrame
  | HeartbeatAckFrame
  | SessionFrame
  | AckFrame;

/** Anything deliverToChannel may send: a contract frame or a broadcast payload. */
export type OutboundFrame = ServerFrame | BroadcastFrame;

export const errorFrame = (code: WsErrorCode, message: string, id?: string): ErrorFrame =>
  id === undefined ? { type: 'error', code, message } : { type: 'error', id, code, message };

export const ackFrame = (op: string, id?: string, extra: Partial<AckFrame> = {}): AckFrame => ({
  type: 'ack',
  ...(id === undefined ? {} : { id }),
  op,
  ...extra,
});
