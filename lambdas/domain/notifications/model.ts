import { createHash } from 'node:crypto';
import { openCursor, signCursor } from '../../core/cursor-mac';
import { invalidCursor } from '../../core/errors';
import type { ResolvedDefaults, Throttle } from '../preferences/rules';
import type { PushRouting } from '../push/routing';
import type { Channel } from './channels';
import type { FallbackStep } from './fallback-steps';
import type { Priority } from './shared-fields';

/** A button of a notification: a link (`url`), or without one a backend action its click publishes. */
export interface NotificationAction {
  readonly id: string;
  readonly label: string;
  readonly url?: string;
}

/**
 * How a notification is batched for one recipient: its own `digest`, the recipient's digest preference, or its
 * throttle's over-limit digest. The batch closes `window_secs` after it opens, at the next `at`, or at `closes_at`.
 */
export interface DigestSpec {
  readonly key: string;
  readonly window_secs?: number;
  readonly at?: string;
  /** A fixed close (epoch ms): the end of the throttle window an over-limit digest collects. */
  readonly closes_at?: number;
  readonly max_items: number;
  readonly title?: string;
}

/** A notification as stored once in the `notifications` table. */
export interface NotificationRecord {
  readonly id: string;
  readonly source: string;
  readonly event_type: string;
  readonly title: string;
  readonly body: string;
  readonly data: Record<string, unknown>;
  readonly priority: Priority;
  readonly channels: readonly Channel[];
  /** The primary link (absent when none was given). */
  readonly url?: string;
  /** Its buttons, 1 to 3 (absent when none were given). */
  readonly actions?: readonly NotificationAction[];
  /** Its category and tags; absent when it has none (and on records written before they existed). */
  readonly category?: string;
  readonly tags?: readonly string[];
  /**
   * The named recipients, kept only for a scheduled notification (its schedule sends a `plan` that reads
   * them); a notification sent now hands them out when it is created, and the item stays small (1 WRU).
   */
  readonly recipient_ids?: readonly string[];
  /** Topics whose subscribers it also reaches; absent when it names none. */
  readonly topics?: readonly string[];
  readonly scheduled_at: string | null;
  readonly expires_at: string | null;
  readonly created_at: string;
  /** When fan-out delivers it (epoch ms): creation, or `scheduled_at` when later. */
  readonly deliver_at: number;
  readonly status: 'accepted' | 'scheduled';
  /** `user:<id>` or `service:<name>`: who created it. */
  readonly created_by: string;
  /** How the `push` channel reaches devices: present exactly when `channels` has `push`. */
  readonly push?: PushRouting;
  /** What the 202 answered as `recipient_count` (absent on records older than the delivery summary). */
  readonly recipient_count?: number;
  /** The service defaults for its event type when it was created (absent on records older than preferences). */
  readonly preference_defaults?: ResolvedDefaults;
  /** Batched per recipient into a digest instead of delivered one by one (docs/digests.md). */
  readonly digest?: DigestSpec;
  /** Set on a digest itself: the batch it sends (a digest is never batched again). */
  readonly digest_of?: { readonly key: string; readonly batch_id: string; readonly count: number };
  /** Its own fallback steps (the request's `fallback`), over the defaults' (fallback-steps.ts, `fallbackOf`). */
  readonly fallback?: readonly FallbackStep[];
  /** Its own throttle (the request's `throttle`, keyed by its event type), over the defaults'. */
  readonly throttle?: Throttle;
  readonly ttl: number;
}

/** A receiver record: one per (notification, recipient) with `in_app`, in the recipient's feed. */
export interface ReceiverRecord {
  readonly user_id: string;
  readonly receiver_id: string;
  readonly notification_id: string;
  readonly delivered_at: string;
  readonly expires_at?: string;
  /** The notification's category and tags, copied so the feed filters and counts by them without its content. */
  readonly category?: string;
  readonly tags?: readonly string[];
  /**
   * When the item last came back into the default feed (unarchived, woken from a snooze): a bulk change leaves
   * alone an item back after it started, as it leaves one delivered after it started.
   */
  readonly returned_at?: string;
  /**
   * Present while unread: the sort key of the `unread` local index. The receiver id, or a key above the
   * user's read-all watermark for a receiver that arrived after a read-all that covers its id.
   */
  readonly unread_key?: string;
  readonly read_at?: string;
  /** When the user's app showed it (marked seen); absent while unseen. */
  readonly seen_at?: string;
  /** Archived: out of the default feed (the `archived` filter lists it) until unarchived. */
  readonly archived_at?: string;
  /** Snoozed: listed only by the `snoozed` filter until its wake-up (a schedule) makes it unread and unseen. */
  readonly snoozed_until?: string;
  /**
   * The unread key of an unread item while it is archived or snoozed: the `unread` index (the unread count)
   * holds only items of the default feed, so it leaves `unread_key` and comes back on unarchive.
   */
  readonly hidden_unread_key?: string;
  /** The `snoozed_until` of the last wake-up: a redelivered wake-up message sends its frame again, nothing more. */
  readonly woken_from?: string;
  /** The first click on the item or one of its buttons (the first wins; later ones change nothing). */
  readonly interacted_at?: string;
  /** The button of that click; absent for a click on the item itself. */
  readonly interacted_action?: string;
  /**
   * The click's id, chosen by the request that recorded it: its `interaction` message on `fanout` publishes the
   * bus event (under this id) only when it finds its own id here.
   */
  readonly interaction_id?: string;
  /**
   * The `interaction_id` whose event was published: a copy of its message (postponed, or delivered again after a
   * failure) finds it and publishes nothing more.
   */
  readonly interaction_published?: string;
  /**
   * The lease on publishing the click's event: the fan-out message id that holds it, and until when (epoch ms,
   * its invocation's deadline). A receive at the same time leaves the event to it; after it, the lease is taken over.
   */
  readonly interaction_holder?: string;
  readonly interaction_until?: number;
  /** Every state change adds 1 in its write (absent: none yet), so a client can drop an older frame. */
  readonly revision?: number;
  /**
   * Present until the recipient's frames went out: the SQS message id of the fan-out message that wrote the
   * record and alone sends them (again, if it is redelivered after a crash).
   */
  readonly frames_pending?: string;
  /**
   * While a queue message sends the pending frames: its message id and until when its invocation can run at
   * most. A copy of that message SQS hands out at the same time finds the lease live and leaves the frames to it.
   */
  readonly frames_holder?: string;
  readonly frames_until?: number;
  readonly ttl: number;
}

/** A notification's link and buttons as the feed and the `notification` frame show them: null and [] when none. */
export const linksOf = (
  notification: Pick<NotificationRecord, 'url' | 'actions'>,
): {
  url: string | null;
  actions: { id: string; label: string; url: string | null }[];
} => ({
  url: notification.url ?? null,
  actions: (notification.actions ?? []).map(({ id, label, url }) => ({ id, label, url: url ?? null })),
});

/** How long feed items are kept when they do not expire earlier. */
export const FEED_RETENTION_MS = 90 * 24 * 3600 * 1000;

/**
 * Receipts (frame-only deliveries, and the claims of releases and fallback steps kept beside them) outlive any SQS
 * redelivery: a queue's retention is 4 days by default.
 */
export const RECEIPT_RETENTION_SECS = 5 * 24 * 3600;

export const isExpired = (expiresAt: string | null | undefined, now = Date.now()): boolean =>
  expiresAt !== null && expiresAt !== undefined && Date.parse(expiresAt) <= now;

/**
 * The receiver id of (notification, recipient): a UUID v7 whose time is the delivery time and whose random
 * bits are a hash of the pair. Deterministic, so a redelivered fan-out writes the same record (exactly one
 * per recipient); time-ordered, so the feed sorts newest first on it.
 */
export const receiverIdFor = (notificationId: string, userId: string, deliverAtMs: number): string => {
  const time = Math.max(0, Math.trunc(deliverAtMs)).toString(16).padStart(12, '0');
  const hash = createHash('sha256').update(`${notificationId}\n${userId}`).digest('hex');
  const variant = ((Number.parseInt(hash[3] ?? '0', 16) & 0x3) | 0x8).toString(16);
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${hash.slice(0, 3)}-${variant}${hash.slice(4, 7)}-${hash.slice(7, 19)}`;
};

const RECEIVER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
export const isReceiverId = (value: string): boolean => RECEIVER_ID.test(value);

const feedScope = (userId: string) => `feed:${userId}`;

/**
 * Feed cursors are opaque: the last receiver id, signed for the user (lambdas/core/cursor-mac.ts), so an edited,
 * forged or foreign cursor is refused (400) instead of silently paging from somewhere else.
 */
export const encodeCursor = (userId: string, receiverId: string): Promise<string> =>
  signCursor(feedScope(userId), receiverId);

export const decodeCursor = async (userId: string, cursor: string): Promise<string> => {
  const receiverId = await openCursor(feedScope(userId), cursor);
  if (!isReceiverId(receiverId)) {
    throw invalidCursor();
  }
  return receiverId;
};
