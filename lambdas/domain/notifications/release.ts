import { forEachLimited } from '../../core/concurrency';
import type { MessageHandling } from '../../core/message-handling';
import { preferencesOf } from '../preferences/preferences';
import { channelsFor } from '../preferences/rules';
import { handOverPushes } from '../push/hand-over';
import { userChannel } from '../realtime/channel-names';
import { channelMembers, deliverToChannel } from '../realtime/deliver';
import { endGoneConnections } from '../realtime/lifecycle';
import { frameFor } from './delivery';
import {
  claimOnce,
  itemsDealtWith,
  markSent,
  runStep,
  scheduleStep,
  stepClaim,
  type ToastStepMessage,
} from './fallback';
import { fallbackOf } from './fallback-steps';
import { heldUntil, type ReleaseMessage, scheduleRelease } from './holding';
import { isExpired, type NotificationRecord, receiverIdFor } from './model';
import { applyThrottle } from './throttle';

/** Recipients of one toast step sent to at once (a claim and a Query of connections each). */
const TOAST_CONCURRENCY = 20;

export type ReleaseOutcome = 'released' | 'held' | 'expired' | 'skipped' | 'throttled';

/**
 * A held delivery (or fallback step) at the end of its window: the preferences of now decide (push or toast turned
 * off meanwhile: not sent; a window added or moved that holds now: held again until it ends); then, unless the
 * notification expired or its item was read (seen, for a step `unless: seen`), the `toast` frame and the push go,
 * once. A held step then schedules the next step, unless its item cancelled it.
 */
export const releaseHeld = async (
  notification: NotificationRecord,
  message: ReleaseMessage,
  handling: MessageHandling,
  now = Date.now(),
): Promise<ReleaseOutcome> => {
  if (isExpired(notification.expires_at, now)) return 'expired';
  const userId = message.user_id;
  const step = message.step === undefined ? undefined : fallbackOf(notification)[message.step];
  if (step && (await itemsDealtWith(notification, [userId], step.unless)).has(userId)) return 'skipped';
  const preferences = (await preferencesOf([userId])).get(userId);
  const allowed = channelsFor(notification, preferences, message.topic);
  const held = message.channels.filter((channel) => allowed.includes(channel));
  const until = heldUntil(notification, preferences, now);
  if (held.length > 0 && until !== undefined && until > Date.parse(message.until)) {
    if (isExpired(notification.expires_at, until)) return 'expired';
    await scheduleRelease({ ...message, until: new Date(until).toISOString(), channels: held });
    return 'held';
  }
  if (message.step !== undefined && message.delivered_at !== undefined) {
    // Released (or turned off): the steps go on. Before anything is sent: a run again schedules it again (claimed).
    const at = { step: message.step + 1, delivered_at: message.delivered_at, topic: message.topic };
    await scheduleStep(notification, [userId], at, now);
  }
  if (held.length === 0) return 'skipped';
  if (!step && (await itemsDealtWith(notification, [userId], 'read')).has(userId)) return 'skipped';
  const claim = message.step === undefined ? 'release' : stepClaim(message.step);
  if (!(await claimOnce(notification.id, claim, userId, handling))) return 'skipped';
  // Throttled when released: a night's worth of held notifications does not all go off at the window's end. Over the
  // limit it stays what it already is, an item in the feed: `over: digest` does not apply here, as a digest would list
  // the item a second time.
  if ((await applyThrottle(notification, userId, held, now)).channels.length === 0) {
    await markSent(notification.id, claim, userId);
    return 'throttled';
  }
  let delivered: number | undefined;
  if (held.includes('toast')) delivered = await sendToast(notification, userId);
  if (held.includes('push')) {
    // `offline` routing: pushed only when no connection received the released frame, or none is open now.
    const online =
      notification.push?.when === 'offline' &&
      (delivered ?? (await channelMembers(userChannel(userId))).length) > 0;
    if (!online) await handOverPushes(notification, [userId]);
  }
  await markSent(notification.id, claim, userId);
  return 'released';
};

/**
 * The `toast` frame of the notification to the recipient's connections open now (the same `id` as its feed item, so
 * an app that lists the item already shows the toast without listing it twice): how many received it.
 */
export const sendToast = async (notification: NotificationRecord, userId: string): Promise<number> => {
  const receiverId = receiverIdFor(notification.id, userId, notification.deliver_at);
  const sent = await deliverToChannel(userChannel(userId), frameFor(notification, receiverId, ['toast']));
  await endGoneConnections(sent.gone);
  return sent.delivered;
};

/**
 * A fallback step of `toast` (fallback.ts): to each recipient it still goes to, the `toast` frame, claimed once per
 * recipient and step.
 */
export const sendToastStep = async (
  notification: NotificationRecord,
  message: ToastStepMessage,
  handling: MessageHandling,
  now = Date.now(),
): Promise<'delivered'> => {
  const at = { step: message.step, delivered_at: message.delivered_at, topic: message.topic };
  const fire = await runStep(notification, message.recipients, at, now);
  await forEachLimited(fire, TOAST_CONCURRENCY, async (userId) => {
    if (await claimOnce(notification.id, stepClaim(message.step), userId, handling)) {
      await sendToast(notification, userId);
      await markSent(notification.id, stepClaim(message.step), userId);
    }
  });
  return 'delivered';
};
