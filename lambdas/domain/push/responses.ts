// Response schemas of the push routes (lambdas/core/response-schemas.ts says why they live apart).
import { pageOf, timestamp } from '../../core/response-schemas';
import * as z from '../../core/zod';
import { PUSH_PROVIDERS } from './provider';
import { PUSH_STATUSES } from './records';

const count = z.int().check(z.gte(0));

export const notificationSummarySchema = z.strictObject({
  notification_id: z.string(),
  status: z.enum(['accepted', 'scheduled']),
  recipients: z.nullable(
    count.check(
      z.describe('what the 202 answered as `recipient_count`: recipients plus topic subscribers then'),
    ),
  ),
  feed_items: count.check(z.describe('feed items written (`in_app`)')),
  frames: count.check(z.describe('`notification` frames sent to open connections (`toast`, `realtime`)')),
  pushes: z
    .strictObject({
      sending: count,
      delivered: count,
      retrying: count,
      failed: count,
      pruned: count,
    })
    .check(z.describe('pushes per status, one per notification × device')),
});

const pushRecordSchema = z.strictObject({
  push_id: z.string().check(z.describe('stable per notification × device (sent as `apns-id`)')),
  user_id: z.string(),
  provider: z.enum(PUSH_PROVIDERS),
  app_id: z.nullable(z.string()),
  status: z.enum(PUSH_STATUSES),
  attempts: z.int().check(z.gte(1)),
  provider_id: z.nullable(
    z
      .string()
      .check(
        z.describe('the provider’s id of a delivered push (`apns-id`, FCM message name, Expo ticket id)'),
      ),
  ),
  reason: z.nullable(
    z.string().check(z.describe('why it is retrying, failed or pruned: the provider’s answer')),
  ),
  next_attempt_at: z.nullable(timestamp),
  created_at: timestamp,
  updated_at: timestamp,
});

export const pushPageSchema = pageOf(pushRecordSchema);
