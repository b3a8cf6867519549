import * as z from '../../core/zod';
import { categorySchema } from './categories';

// Request bodies of the feed's state changes, apart from the creation schema (feed-query.ts says why); the
// snooze's is in snooze-request.ts, so that these routes carry no timestamp checks.

/** Feed items one POST /notifications/seen marks at most (one frame names them all). */
export const MAX_SEEN_IDS = 100;

const receiverIdField = z.string().check(z.minLength(1), z.maxLength(64));

/** POST /notifications/seen: the items an app showed. */
export const markSeenSchema = z.strictObject({
  ids: z.array(receiverIdField).check(
    z.minLength(1),
    z.maxLength(MAX_SEEN_IDS),
    z.refine((ids) => new Set(ids).size === ids.length, { message: 'duplicate ids' }),
    z.describe('receiver ids (the `id` of feed items and notification frames)'),
  ),
});

/** What POST /notifications/bulk does to every matching item. */
export const BULK_ACTIONS = ['mark_seen', 'mark_read', 'archive'] as const;
export type BulkAction = (typeof BULK_ACTIONS)[number];

/** POST /notifications/bulk: one change to every item of the default feed that matches. */
export const bulkChangeRequestSchema = z.strictObject({
  action: z.enum(BULK_ACTIONS),
  before: z.optional(
    receiverIdField.check(
      z.describe('only items older than this one (a receiver id); absent: every item of the default feed'),
    ),
  ),
  category: z.optional(categorySchema.check(z.describe('only items of this category; absent: of every one'))),
});

/** POST /notifications/{receiver_id}/interact: a click on the item, or on one of its buttons. */
export const interactSchema = z.strictObject({
  action_id: z.optional(
    z
      .string()
      .check(
        z.minLength(1),
        z.maxLength(32),
        z.describe('the button clicked (its `id`); absent: a click on the item itself'),
      ),
  ),
});
