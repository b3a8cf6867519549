// Response schemas of the notification routes (lambdas/core/response-schemas.ts says why they live apart).
import { pageOf, timestamp } from '../../core/response-schemas';
import * as z from '../../core/zod';
import { CHANNELS } from './channels';
import { PRIORITIES } from './shared-fields';

/** 202 of POST /notifications. */
export const notificationAcceptedSchema = z.strictObject({
  id: z.string(),
  status: z.enum(['accepted', 'scheduled']),
  recipient_count: z
    .int()
    .check(
      z.gte(0),
      z.describe('recipients plus, per named topic, its subscriber count at request time (an upper bound)'),
    ),
  scheduled_at: z.nullable(timestamp),
});

/** One item of the in-app feed (a receiver record joined with its notification). */
export const receiverSchema = z.strictObject({
  id: z
    .string()
    .check(z.describe('the receiver id (the path parameter of POST /notifications/{receiver_id}/read)')),
  notification_id: z.string(),
  source: z.string(),
  event_type: z.string(),
  title: z.string(),
  body: z.string(),
  data: z.record(z.string(), z.unknown()),
  priority: z.enum(PRIORITIES),
  channels: z.array(z.enum(CHANNELS)),
  created_at: timestamp,
  read_at: z.nullable(timestamp),
  expires_at: z.nullable(timestamp),
});

export const feedPageSchema = pageOf(receiverSchema);

export const markedReadSchema = z.strictObject({ id: z.string(), read_at: timestamp });

export const readAllSchema = z.strictObject({
  updated: z.int().check(z.gte(0), z.describe('receivers that became read')),
});

export const unreadCountSchema = z.strictObject({ count: z.int().check(z.gte(0)) });
