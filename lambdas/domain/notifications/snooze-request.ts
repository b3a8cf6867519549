import * as z from '../../core/zod';
import { timestamp } from './input-timestamp';

/** How far ahead an item may be snoozed. */
export const MAX_SNOOZE_AHEAD_MS = 365 * 24 * 3600 * 1000;

/** POST /notifications/{receiver_id}/snooze. */
export const snoozeSchema = z.strictObject({
  until: timestamp.check(
    z.refine((until) => Date.parse(until) > Date.now(), { message: 'must be in the future' }),
    z.refine((until) => Date.parse(until) <= Date.now() + MAX_SNOOZE_AHEAD_MS, {
      message: 'must be at most 365 days ahead',
    }),
    z.describe(
      'when the item wakes up (in the future, at most 365 days ahead): unread and unseen again, announced by a `woken` frame',
    ),
  ),
});
