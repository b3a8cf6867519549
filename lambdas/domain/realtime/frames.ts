/**
 * Server-to-client WebSocket frames, exactly as contract §4 shapes them; the types come from the frame schemas
 * (server-frames.ts, types only here). Client frames are parsed in client-frames.ts. Every frame is a JSON object
 * with a string `type`.
 */

import type * as z from '../../core/zod';
import type * as schemas from './server-frames';

export type PresenceStatus = (typeof schemas.PRESENCE_STATUSES)[number];
/** What GET /presence answers: a user with no live connection is `offline`. */
export type PresenceState = (typeof schemas.PRESENCE_STATES)[number];

export type NotificationFrame = z.output<typeof schemas.notificationFrameSchema>;
export type NotificationStateFrame = z.output<typeof schemas.notificationStateFrameSchema>;
export type NotificationBulkFrame = z.output<typeof schemas.notificationBulkFrameSchema>;
export type EventFrame = z.output<typeof schemas.eventFrameSchema>;
export type PresenceFrame = z.output<typeof schemas.presenceFrameSchema>;
export type PresenceSummaryFrame = z.output<typeof schemas.presenceSummaryFrameSchema>;
export type WsErrorCode = (typeof schemas.WS_ERROR_CODES)[number];
export type ErrorFrame = z.output<typeof schemas.errorFrameSchema>;
export type HeartbeatAckFrame = z.output<typeof schemas.heartbeatAckFrameSchema>;
export type SessionFrame = z.output<typeof schemas.sessionFrameSchema>;
export type AckFrame = z.output<typeof schemas.ackFrameSchema>;

/** A frame POST /broadcast sends as given: any object with a string `type`. */
export interface BroadcastFrame {
  readonly type: string;
  readonly [field: string]: unknown;
}

export type ServerFrame =
  | NotificationFrame
  | NotificationStateFrame
  | NotificationBulkFrame
  | EventFrame
  | PresenceFrame
  | PresenceSummaryFrame
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
