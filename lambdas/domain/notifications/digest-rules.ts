import { categoryKey, type DigestPreference, type Throttle } from '../preferences/rules';
import { filterMatches } from '../webhooks/filters';
import type { DigestSpec, NotificationRecord } from './model';

// Whether a notification is batched for a recipient, apart from the join (digest-join.ts): the types the
// notification record and the preferences name, without the join's DynamoDB and Scheduler code.

/** Items a digest lists unless its sender says otherwise. */
export const DEFAULT_DIGEST_ITEMS = 10;

/**
 * Batches are kept apart by scope: a key given by the sender, one of the user's own digests and a throttle's
 * over-limit digest never share a batch.
 */
const PREFERENCE_SCOPE = 'preference:';
const DEFAULT_SCOPE = 'default:';
const THROTTLE_SCOPE = 'throttle:';

/** The batch a notification joins for one recipient: its scope and how the batch closes. */
export interface DigestChoice {
  readonly scope: string;
  readonly spec: DigestSpec;
}

/**
 * The batch of a throttle's over-limit notifications (`over: digest`): one per recipient and throttle key, closing
 * when the throttle window it was over in ends, so the recipient hears of them once the limit allows again.
 */
export const overLimitDigest = (throttle: Throttle, windowEnd: number): DigestChoice => ({
  scope: `${THROTTLE_SCOPE}${throttle.key}`,
  spec: { key: throttle.key, closes_at: windowEnd, max_items: DEFAULT_DIGEST_ITEMS },
});

/**
 * Whether every recipient left a channel joins a digest, whatever their preferences say: the notification's own
 * `digest`, or a digest of the service defaults on a type they do not make required (a user's choice only picks
 * another batch). Such a delivery writes no feed item and sends nothing now, so it reads nothing for that.
 */
export const batchesEveryRecipient = (
  notification: Pick<NotificationRecord, 'digest' | 'digest_of' | 'preference_defaults'>,
): boolean => {
  if (notification.digest_of) return false;
  const defaults = notification.preference_defaults;
  return notification.digest !== undefined || (defaults?.digest !== undefined && !defaults.required);
};

/**
 * How a notification is batched for this recipient, if at all: its own `digest` wins; else the recipient's
 * first digest choice whose `event_type` or `category` pattern matches; else the digest the service defaults
 * fixed on it. A digest is never batched again, and a type the service defaults make required is held back by
 * neither a user's choice nor a default.
 */
export const digestFor = (
  notification: NotificationRecord,
  preferences: readonly DigestPreference[] | undefined,
): DigestChoice | undefined => {
  if (notification.digest_of) return undefined;
  if (notification.digest) return { scope: `key:${notification.digest.key}`, spec: notification.digest };
  const defaults = notification.preference_defaults;
  if (defaults?.required) return undefined;
  const { category } = notification;
  const choice = (preferences ?? []).find((digest) =>
    digest.category !== undefined
      ? category !== undefined && filterMatches(digest.category, category)
      : digest.event_type !== undefined && filterMatches(digest.event_type, notification.event_type),
  );
  if (!choice)
    return defaults?.digest
      ? { scope: `${DEFAULT_SCOPE}${defaults.digest.key}`, spec: defaults.digest }
      : undefined;
  const pattern = choice.category !== undefined ? categoryKey(choice.category) : choice.event_type;
  return {
    scope: `${PREFERENCE_SCOPE}${pattern}`,
    spec: {
      key: pattern ?? '*',
      ...(choice.window_secs !== undefined ? { window_secs: choice.window_secs } : { at: choice.at }),
      max_items: DEFAULT_DIGEST_ITEMS,
    },
  };
};
