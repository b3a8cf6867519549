import { validationError } from '../../core/errors';
import type { FanoutMessage } from './fanout-messages';
import { sendOnFanoutAt } from './fanout-schedule';
import { feedState } from './feed';
import { announce, applyTransition, type ItemState, loadReceiver, snoozeUntil, stateOf } from './item-states';

// Apart from item-states.ts: the snooze sends on the fan-out queue, whose message schemas the other state
// changes (bulk changes among them) would otherwise carry.

const wakeMessage = (userId: string, receiverId: string, until: string): FanoutMessage => ({
  kind: 'wake',
  user_id: userId,
  receiver_id: receiverId,
  until,
});

/**
 * POST /notifications/{receiver_id}/snooze: the wake-up is scheduled first (EventBridge Scheduler, one
 * schedule per item and time), then the item hidden. A crash in between leaves a schedule whose wake-up finds
 * the item not snoozed until then and does nothing; a retry finds the schedule made and goes on.
 */
export const snoozeItem = async (userId: string, receiverId: string, until: string): Promise<ItemState> => {
  const [receiver, feed] = await Promise.all([loadReceiver(userId, receiverId), feedState(userId)]);
  const untilMs = Date.parse(until);
  // An item that is gone by then would never wake: it expires, or its retention (TTL) ends, first.
  const endsMs = Math.min(
    receiver.expires_at ? Date.parse(receiver.expires_at) : Number.POSITIVE_INFINITY,
    receiver.ttl * 1000,
  );
  if (untilMs >= endsMs) {
    throw validationError('Invalid request body', [
      {
        field: 'until',
        issue: `must be before the item leaves the feed (${new Date(endsMs).toISOString()})`,
      },
    ]);
  }
  const stored = new Date(untilMs).toISOString();
  const message = wakeMessage(userId, receiverId, stored);
  await sendOnFanoutAt(`snooze-${receiverId}-${untilMs}`, untilMs, message);
  const result = await applyTransition(receiver, feed, snoozeUntil(stored));
  const state = stateOf(result.receiver, result.feed);
  await announce(userId, { type: 'notification.state', change: 'snoozed', ...state });
  return state;
};
