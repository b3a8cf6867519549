import { createHash } from 'node:crypto';
import { quietUntil } from '../preferences/quiet-hours';
import { HOLD_ALL, type UserPreferences } from '../preferences/rules';
import type { Channel } from './channels';
import type { FanoutMessage } from './fanout-messages';
import { scheduleOnFanout } from './fanout-schedule';
import { isExpired, type NotificationRecord } from './model';

/*
 * Quiet hours at delivery (docs/delivery-rules.md): during a recipient's window its `push` and `toast` are held,
 * the rest (the feed item, a `realtime` frame) goes at once. A held delivery is a one-time Scheduler schedule that
 * sends a `release` message to the fan-out queue when the window ends; the release sends what was held unless
 * the notification expired or the item was read meanwhile (release.ts).
 */

/** The channels quiet hours hold; `in_app` and `realtime` are silent and go at once. */
const HOLDABLE: readonly Channel[] = ['push', 'toast'];

export type ReleaseMessage = Extract<FanoutMessage, { kind: 'release' }>;

/** Whether the defaults fixed on the notification let it through quiet hours (urgent priority, required types). */
const passesQuietHours = (notification: NotificationRecord): boolean => {
  const defaults = notification.preference_defaults;
  const pass = defaults?.quiet_hours ?? HOLD_ALL;
  return (
    (pass.urgent && notification.priority === 'urgent') || (pass.required && defaults?.required === true)
  );
};

/** When the recipient's quiet period holding `now` ends, if it does and the notification is held by it. */
export const heldUntil = (
  notification: NotificationRecord,
  preferences: UserPreferences | undefined,
  now: number,
): number | undefined => {
  if (!preferences?.quiet_hours || !preferences.time_zone || passesQuietHours(notification)) return undefined;
  return quietUntil(preferences.quiet_hours, preferences.time_zone, now);
};

/** One schedule per (notification, recipient, fallback step or none, end of window): creating it again is a no-op. */
const releaseScheduleName = (message: ReleaseMessage): string => {
  const { notification_id: id, user_id: userId, until, step } = message;
  const what = step === undefined ? until : `${until}\nstep ${step}`;
  return `hold-${createHash('sha256').update(`${id}\n${userId}\n${what}`).digest('hex').slice(0, 40)}`;
};

export const scheduleRelease = (message: ReleaseMessage): Promise<void> =>
  scheduleOnFanout(releaseScheduleName(message), Date.parse(message.until), message);

/** A fallback step held by quiet hours: which one, and the delivery its steps count from. */
export interface HeldStep {
  readonly step: number;
  readonly delivered_at: number;
}

/**
 * The channels a recipient gets now: `channels` less what its quiet hours hold. What is held is scheduled for
 * release before this returns, so a delivery that has answered (or acknowledged its message) has it safe; a
 * redelivered chunk schedules the same release again, which is a no-op. Held past the notification's expiry, it is
 * dropped: the release would find it expired.
 */
export const holdForQuietHours = async (
  notification: NotificationRecord,
  userId: string,
  preferences: UserPreferences | undefined,
  channels: readonly Channel[],
  topic: string | undefined,
  now = Date.now(),
  step?: HeldStep,
): Promise<readonly Channel[]> => {
  const held = channels.filter((channel) => HOLDABLE.includes(channel));
  if (held.length === 0) return channels;
  const until = heldUntil(notification, preferences, now);
  if (until === undefined) return channels;
  const rest = channels.filter((channel) => !held.includes(channel));
  if (isExpired(notification.expires_at, until)) return rest;
  await scheduleRelease({
    kind: 'release',
    notification_id: notification.id,
    user_id: userId,
    until: new Date(until).toISOString(),
    channels: held as ('push' | 'toast')[],
    ...(topic === undefined ? {} : { topic }),
    ...step,
  });
  return rest;
};
