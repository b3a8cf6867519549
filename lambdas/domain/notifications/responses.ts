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

/** The states of one feed item, as every state change answers them (and the `notification.state` frame). */
export const itemStateFields = {
  id: z.string().check(z.describe('the receiver id')),
  seen_at: z.nullable(timestamp),
  read_at: z.nullable(timestamp),
  archived_at: z.nullable(timestamp),
  snoozed_until: z.nullable(timestamp),
  interacted_at: z.nullable(
    timestamp.check(z.describe('the first click on the item or one of its buttons (the first click wins)')),
  ),
  interacted_action: z.nullable(
    z.string().check(z.describe('the button of that click (its `id`); null for a click on the item itself')),
  ),
  revision: z
    .int()
    .check(
      z.gte(0),
      z.describe(
        'how many state changes the item has had (0: none): every change adds 1 in the same write, so of two ' +
          'frames or answers about one item the one with the higher revision is the newer',
      ),
    ),
};

/** A notification's button, as the feed and the `notification` frame carry it. */
const actionSchema = z.strictObject({
  id: z.string(),
  label: z.string(),
  url: z.nullable(
    z
      .string()
      .check(z.describe('a link; null: a backend action (its click reaches the sender as a bus event)')),
  ),
});

/** What a receiver shows of its notification's link and buttons (`[]` and null when it has none). */
export const linkFields = {
  url: z.nullable(z.string().check(z.describe('the primary link'))),
  actions: z.array(actionSchema).check(z.describe('up to 3 buttons')),
};

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
  seen_at: z.nullable(timestamp),
  archived_at: z.nullable(timestamp),
  snoozed_until: z.nullable(
    timestamp.check(z.describe('hidden until then: the wake-up makes it unread and unseen again')),
  ),
  ...linkFields,
  interacted_at: itemStateFields.interacted_at,
  interacted_action: itemStateFields.interacted_action,
  revision: itemStateFields.revision,
  category: z.nullable(z.string()),
  tags: z.array(z.string()),
});

export const feedPageSchema = pageOf(receiverSchema);

export const markedReadSchema = z.strictObject({ id: z.string(), read_at: timestamp });

export const readAllSchema = z.strictObject({
  updated: z.int().check(z.gte(0), z.describe('receivers that became read')),
});

export const unreadCountSchema = z.strictObject({ count: z.int().check(z.gte(0)) });

const countFields = {
  unseen: z.int().check(z.gte(0), z.describe('items not marked seen')),
  unread: z
    .int()
    .check(z.gte(0), z.describe('items not read (what GET /notifications/unread-count answers)')),
  total: z.int().check(z.gte(0)),
};

/** 200 of GET /notifications/counts: over the default feed (not archived, not snoozed, not expired). */
export const feedCountsSchema = z.strictObject({
  ...countFields,
  categories: z
    .record(z.string(), z.strictObject(countFields))
    .check(
      z.describe(
        'per category that has items in the default feed; items without a category count only above',
      ),
    ),
});

export const itemStateSchema = z.strictObject(itemStateFields);

export const markedSeenSchema = z.strictObject({ items: z.array(itemStateSchema) });

export const bulkChangeSchema = z.strictObject({
  updated: z
    .int()
    .check(z.gte(0), z.describe('items the change applied to (those already so are not counted)')),
});
