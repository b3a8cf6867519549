/**
 * Schemas of the server-to-client WebSocket frames (contract §4). The frame types in frames.ts are derived from
 * them, docs/api/asyncapi.json is generated from them, and the end-to-end tests check every frame they receive
 * against that document. Not imported by handlers at run time (types only), so no bundle carries them.
 */
import { IDENTIFIER_CHARACTERS } from '../../core/identifiers';
import { timestamp } from '../../core/response-schemas';
import * as z from '../../core/zod';
import { itemStateFields, linkFields } from '../notifications/responses';
import { PRIORITIES } from '../notifications/shared-fields';
import { broadcastTypeSchema } from './broadcast-schema';
import type { ServerFrameType } from './server-frame-types';

export const PRESENCE_STATUSES = ['online', 'away', 'busy'] as const;
/** What presence answers: a user with no live connection is `offline`. */
export const PRESENCE_STATES = [...PRESENCE_STATUSES, 'offline'] as const;

/** Codes of `error` frames; `unauthorized` (unasked) and the last three announce a close the server starts. */
export const WS_ERROR_CODES = [
  'validation',
  'unauthorized',
  'forbidden',
  'not_found',
  'payload_too_large',
  'session_expired',
  'rate_limited',
  'internal',
  'unavailable',
  'token_expired',
  'idle_timeout',
  'session_taken_over',
] as const;

const frameId = z.optional(
  z
    .string()
    .check(
      z.maxLength(IDENTIFIER_CHARACTERS.frameId),
      z.describe('the client frame’s `id`, when it had one'),
    ),
);

export const notificationFrameSchema = z.strictObject({
  type: z.literal('notification'),
  id: z.string().check(z.describe('the receiver id when an in-app record exists, else the notification id')),
  notification_id: z.string(),
  event_type: z.string(),
  source: z.string(),
  title: z.string(),
  body: z.string(),
  data: z.record(z.string(), z.unknown()),
  priority: z.enum(PRIORITIES),
  created_at: timestamp,
  ...linkFields,
  category: z.nullable(z.string()),
  tags: z.array(z.string()),
  channel: z.enum(['toast', 'realtime']).check(z.describe('the notification channel this frame delivers')),
});

/** What changed one feed item's state, as the `notification.state` frame says. */
export const STATE_CHANGES = [
  'seen',
  'read',
  'archived',
  'unarchived',
  'snoozed',
  'woken',
  'interacted',
] as const;

export const notificationStateFrameSchema = z.strictObject({
  type: z.literal('notification.state'),
  change: z.enum(STATE_CHANGES),
  ...itemStateFields,
});

/** What a bulk change did to every item it matched, as the `notification.bulk` frame says. */
export const BULK_CHANGES = ['seen', 'read', 'archived'] as const;

export const notificationBulkFrameSchema = z.strictObject({
  type: z.literal('notification.bulk'),
  change: z.enum(BULK_CHANGES),
  ids: z.nullable(
    z
      .array(z.string())
      .check(z.describe('the items changed, when named one by one (POST /notifications/seen)')),
  ),
  before: z.nullable(
    z
      .string()
      .check(z.describe('a bulk change of the items older than this receiver id; null: of every item')),
  ),
  category: z.nullable(
    z.string().check(z.describe("a bulk change of this category's items only; null: of every category")),
  ),
  at: timestamp.check(
    z.describe('when it ran: with `ids` null, it changed the items of the default feed delivered by then'),
  ),
  updated: z.int().check(z.gte(0), z.describe('items that changed (those already so are not counted)')),
});

export const eventFrameSchema = z.strictObject({
  type: z.literal('event'),
  channel: z.string().check(z.describe('the WebSocket channel it was sent to: `topic:<event_type>`')),
  id: z
    .string()
    .check(
      z.describe(
        'the event id POST /events answered; for a replayed event a new id of its own (see `original_id`)',
      ),
    ),
  event_type: z.string(),
  source: z.string(),
  version: z.int().check(z.gte(1)),
  data: z.record(z.string(), z.unknown()),
  time: timestamp,
  replayed: z.optional(
    z.literal(true).check(z.describe('present on an event sent again by an archive replay')),
  ),
  original_id: z.optional(
    z.string().check(z.describe('on a replayed event: the id of the event it repeats')),
  ),
});

export const presenceFrameSchema = z.strictObject({
  type: z.literal('presence'),
  scope: z.string().check(z.describe('`room:<id>`')),
  user_id: z.string(),
  status: z.enum(PRESENCE_STATES),
  last_seen_at: timestamp,
  change: z.enum(['join', 'leave', 'update']),
});

/**
 * Sent instead of `presence` frames to rooms above `scale.presence.announce_max` subscribers, at most once per
 * `scale.presence.summary_secs` and only after a change (docs/realtime.md, presence in large rooms).
 */
export const presenceSummaryFrameSchema = z.strictObject({
  type: z.literal('presence.summary'),
  id: z
    .string()
    .check(z.describe('the summary’s id: a summary delivered twice (delivery is at least once) repeats it')),
  scope: z.string().check(z.describe('`room:<id>`')),
  members: z
    .int()
    .check(z.gte(0), z.describe('users with a connection in the room now (GET /presence?scope= lists them)')),
  joined: z
    .int()
    .check(z.gte(0), z.describe('`join` changes since `since`: users whose first connection joined')),
  left: z
    .int()
    .check(z.gte(0), z.describe('`leave` changes since `since`: users whose last connection left')),
  updated: z.int().check(z.gte(0), z.describe('`update` changes since `since`: a member’s status changed')),
  since: timestamp.check(z.describe('the previous summary’s `at`, or the first change counted')),
  at: timestamp.check(z.describe('when the counts were taken')),
});

export const errorFrameSchema = z.strictObject({
  type: z.literal('error'),
  id: frameId,
  code: z.enum(WS_ERROR_CODES),
  message: z.string(),
});

/** API Gateway sends it from a fixed template (a MOCK route): it cannot repeat the heartbeat's `id`. */
export const heartbeatAckFrameSchema = z.strictObject({ type: z.literal('heartbeat.ack') });

export const sessionFrameSchema = z.strictObject({
  type: z.literal('session'),
  session_id: z.string().check(z.describe('give it to `reconnect` to resume this session after a drop')),
  user_id: z.string(),
  heartbeat_interval_ms: z.int().check(z.gte(1), z.describe('send a `heartbeat` frame at least this often')),
});

export const ackFrameSchema = z.strictObject({
  type: z.literal('ack'),
  id: frameId,
  op: z.string().check(z.describe('the client frame’s type')),
  replayed: z.optional(
    z.int().check(z.gte(0), z.describe('`reconnect` only: how many missed frames follow the ack')),
  ),
  session_id: z.optional(
    z.string().check(z.describe('`reconnect` only: the session the connection now belongs to')),
  ),
  channel: z.optional(
    z
      .string()
      .check(z.describe('`subscribe`, `unsubscribe`, `join.room`, `join.topic`: the channel concerned')),
  ),
});

/** A frame POST /broadcast sends as given: any object with a string `type` that is none of the above. */
export const broadcastFrameSchema = z.looseObject({ type: broadcastTypeSchema });

/**
 * Not the service's: API Gateway's own answer (no `type`) when the function behind a frame fails or times out.
 * The frame was not processed; a client may send it again.
 */
export const gatewayErrorFrameSchema = z.strictObject({
  message: z.string().check(z.describe('e.g. `Internal server error`')),
  connectionId: z.string(),
  requestId: z.string(),
});

/** Every frame type the service itself defines, by `type`. */
export const SERVER_FRAMES = {
  session: sessionFrameSchema,
  ack: ackFrameSchema,
  error: errorFrameSchema,
  'heartbeat.ack': heartbeatAckFrameSchema,
  notification: notificationFrameSchema,
  'notification.state': notificationStateFrameSchema,
  'notification.bulk': notificationBulkFrameSchema,
  event: eventFrameSchema,
  presence: presenceFrameSchema,
  'presence.summary': presenceSummaryFrameSchema,
} as const satisfies Record<ServerFrameType, z.ZodMiniType>;
