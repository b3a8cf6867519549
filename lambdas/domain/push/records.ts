import { createHash } from 'node:crypto';
import type { PushProviderName } from './provider';

/** How long push records are kept (the per-notification summary and per-device records read them). */
const PUSH_RETENTION_SECS = 30 * 24 * 3600;

export const PUSH_STATUSES = ['sending', 'delivered', 'retrying', 'failed', 'pruned'] as const;
export type PushStatus = (typeof PUSH_STATUSES)[number];

/** A provider's dead-token answer whose device is still to be deleted and announced (recorded before either). */
export interface PendingPrune {
  readonly reason: string;
  readonly token: string;
  /** The registration pushed to: only that one is deleted, not one made since. */
  readonly registered_at: string;
}

/** The push of the notification to one device: an entry of its recipient's record, keyed by the token hash. */
export interface DevicePush {
  readonly provider: PushProviderName;
  readonly app_id: string | null;
  /** `sending` also while a pending prune is completed (`prune`). */
  readonly status: PushStatus;
  /** Attempts made or being made. */
  readonly attempts: number;
  /** The SQS message of its latest attempt: the one that queues what follows from its outcome. */
  readonly claimed_by: string;
  /** Attempts after the first, while sending: until when the holder's invocation can run. */
  readonly claim_expires_at?: number;
  readonly provider_id?: string;
  /** Why it is retrying, failed or pruned: the provider's answer. */
  readonly reason?: string;
  readonly next_attempt_at?: string;
  /** Failed in a way that sent a dead letter to the DLQ (credentials refused, attempts used up). */
  readonly dead_letter?: boolean;
  /** Its dead letter is on the queue: a redelivery of the message that failed it does not queue it again. */
  readonly dead_letter_queued?: boolean;
  /** The id of the dead letter that stands: another, queued by a copy of the same message, is dropped. */
  readonly dead_letter_id?: string;
  readonly prune?: PendingPrune;
  readonly updated_at: string;
}

/**
 * The pushes of a notification to one recipient's devices, one item in the `pushes` table (sort key
 * `p#<user key>`; the user key is a hash, as user ids may hold any character). One item per recipient rather than
 * per device: its first attempts are claimed with one write and recorded with one more, whatever the number of
 * devices (under 1 KB, 1 WRU each, for the usual two or three devices).
 */
export interface RecipientPushes {
  readonly notification_id: string;
  readonly record_key: string;
  readonly user_id: string;
  /** Token hash → that device's push: the devices registered when the recipient's push was first claimed. */
  readonly devices: Readonly<Record<string, DevicePush>>;
  /** The message holding the first attempts, and until when (absent once they are recorded). */
  readonly claimed_by: string;
  readonly claim_expires_at?: number;
  readonly created_at: string;
  readonly updated_at: string;
  readonly ttl: number;
}

/** The sort key of the notification's summary item (summary-counts.ts), beside its push records. */
export const SUMMARY_KEY = 'summary';

/** The sort-key prefix of every push record (other items of a notification's partition have other keys). */
export const PUSH_KEY_PREFIX = 'p#';

/** 128 bits of SHA-256 of the user id, base64url: a key part of fixed length whatever the id. */
const userKey = (userId: string): string =>
  createHash('sha256').update(userId, 'utf8').digest('base64url').slice(0, 22);

/** The sort key of one recipient's push record. */
export const recipientPushKey = (userId: string): string => `${PUSH_KEY_PREFIX}${userKey(userId)}`;

export const pushRecordKey = (notificationId: string, userId: string) => ({
  notification_id: notificationId,
  record_key: recipientPushKey(userId),
});

/**
 * The push id of (notification, device): a UUID (version 8, name-based) of SHA-256 over both, the same on every
 * attempt, so providers and devices that see it twice (`apns-id`, the stand-ins, the app) can tell a repeat.
 */
export const pushIdFor = (notificationId: string, tokenHash: string): string => {
  const hash = createHash('sha256').update(`${notificationId}\n${tokenHash}`).digest();
  hash[6] = ((hash[6] ?? 0) & 0x0f) | 0x80;
  hash[8] = ((hash[8] ?? 0) & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
};

export const pushRetentionTtl = (now = Date.now()): number => Math.floor(now / 1000) + PUSH_RETENTION_SECS;

/** What the routes show of an entry: a pending prune is still `sending`. */
export const shownStatus = (push: DevicePush): PushStatus => (push.prune ? 'sending' : push.status);
