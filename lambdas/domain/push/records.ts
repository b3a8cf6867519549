import { createHash } from 'node:crypto';
import type { PushProviderName } from './provider';

/** How long push records are kept (the per-notification summary and per-device records read them). */
const PUSH_RETENTION_SECS = 30 * 24 * 3600;

export const PUSH_STATUSES = ['sending', 'delivered', 'retrying', 'failed', 'pruned'] as const;
export type PushStatus = (typeof PUSH_STATUSES)[number];

/**
 * One push: (notification, device) in the `pushes` table. Its sort key `p#<user key>#<token hash>` groups a user's
 * pushes of the notification (a recipient reads its own by key prefix); the user key is a hash, as user ids may hold
 * any character.
 */
export interface PushRecord {
  readonly notification_id: string;
  readonly device: string;
  readonly push_id: string;
  readonly user_id: string;
  readonly token_hash: string;
  readonly provider: PushProviderName;
  readonly app_id: string | null;
  readonly status: PushStatus;
  /** Attempts made or being made. */
  readonly attempts: number;
  readonly provider_id?: string;
  /** Why it is retrying, failed or pruned: the provider's answer. */
  readonly reason?: string;
  readonly next_attempt_at?: string;
  /** Failed in a way that sent a dead letter to the DLQ (credentials refused, attempts used up). */
  readonly dead_letter?: boolean;
  /** Its dead letter is on the queue: a redelivery of the message that failed it does not queue it again. */
  readonly dead_letter_queued?: boolean;
  /** The SQS message that holds (or last held) the push, and until when its invocation can run while it sends. */
  readonly claimed_by?: string;
  readonly claim_expires_at?: number;
  readonly created_at: string;
  readonly updated_at: string;
  readonly ttl: number;
}

/** The sort key of the notification's summary item (report.ts), beside its push records. */
export const SUMMARY_KEY = 'summary';

/** The sort-key prefix of every push record (other items of a notification's partition have other keys). */
export const PUSH_KEY_PREFIX = 'p#';

/** 128 bits of SHA-256 of the user id, base64url: a key part of fixed length whatever the id. */
const userKey = (userId: string): string =>
  createHash('sha256').update(userId, 'utf8').digest('base64url').slice(0, 22);

/** The key prefix of one user's pushes of a notification. */
export const userPushPrefix = (userId: string): string => `${PUSH_KEY_PREFIX}${userKey(userId)}#`;

export const pushKey = (notificationId: string, userId: string, tokenHash: string) => ({
  notification_id: notificationId,
  device: `${userPushPrefix(userId)}${tokenHash}`,
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
