/*
 * How a notification asks for push (contract §3 "Notifications", field `push`), as stored on the notification. Apart
 * from the schema so that the fan-out and push workers, which validate nothing, do not load zod.
 */

/**
 * When a recipient's devices get the push, in order from the most to the least eager:
 * - `always`: with the delivery;
 * - `offline`: with the delivery, only to a recipient none of whose open connections received its frame;
 * - `unread`: `after_secs` after the delivery, only if the recipient's feed item is still unread then: the one-step
 *   fallback of push (notifications/fallback-steps.ts, `fallbackOf`).
 */
export const PUSH_WHEN = ['always', 'offline', 'unread'] as const;
export type PushWhen = (typeof PUSH_WHEN)[number];

/** The wait of `unread` when the request gives none, and the longest it may ask for. */
export const DEFAULT_UNREAD_AFTER_SECS = 300;
export const MAX_UNREAD_AFTER_SECS = 7 * 24 * 3600;

/** Collapse keys every provider takes: APNs `apns-collapse-id` (64 bytes), Web Push `Topic` (32 base64url). */
export const COLLAPSE_KEY = /^[A-Za-z0-9_-]{1,32}$/;

export interface PushRouting {
  readonly when: PushWhen;
  /** `unread` only: seconds after the delivery at which the feed item is checked. */
  readonly after_secs?: number;
  readonly collapse_key: string | null;
  readonly silent: boolean;
}

/** What a notification with the `push` channel and no `push` field gets. */
export const DEFAULT_PUSH_ROUTING: PushRouting = { when: 'always', collapse_key: null, silent: false };
