import type { Priority } from '../notifications/shared-fields';

/*
 * The one interface between the push pipeline (who gets a push, exactly once, what happened) and the providers
 * (how one push goes over one provider's wire). A provider module maps `PushContent` to its wire format, sends it,
 * and classifies the answer; it never touches DynamoDB or SQS.
 */

/** The push services Notify speaks (export it when a schema needs the list). */
const PUSH_PROVIDERS = ['fcm', 'apns', 'webpush', 'expo'] as const;
export type PushProviderName = (typeof PUSH_PROVIDERS)[number];

/** What one push to one device carries, provider-neutral (docs/push.md "Mapping"). */
export interface PushContent {
  /** Stable per notification × device (a UUID): sent as `apns-id`, logged by the stand-ins. */
  readonly push_id: string;
  readonly notification_id: string;
  readonly event_type: string;
  readonly title: string;
  readonly body: string;
  readonly data: Readonly<Record<string, unknown>>;
  /** `high` and `urgent` are the providers' high priority; `low` and `normal` their normal one. */
  readonly priority: Priority;
  /** When the push is worthless (ISO 8601): TTL, `apns-expiration`. Null: the provider's longest. */
  readonly expires_at: string | null;
  /** Pushes with the same key replace each other on the device (collapse id, `Topic`, tag). */
  readonly collapse_key: string | null;
  /** The APNs badge: the recipient's unread count at send time. Null: no badge change. */
  readonly badge: number | null;
  /** Data-only: nothing is shown; the app (or service worker) wakes with `data`. */
  readonly silent: boolean;
}

/** Where one push goes: one registered device. */
export interface PushTarget {
  readonly provider: PushProviderName;
  /** The registered token: FCM registration token, APNs device token (hex), Expo push token, or the Web Push endpoint. */
  readonly token: string;
  /** Selects the credentials (config `push.apps`); null: the stage's default app. */
  readonly app_id: string | null;
  /** APNs only. */
  readonly apns_environment?: 'sandbox' | 'production';
  /** Web Push only: the subscription's keys (base64url, as the browser's PushSubscription gives them). */
  readonly web_keys?: { readonly p256dh: string; readonly auth: string };
  /** When the device was registered (ISO 8601): an APNs 410 prunes only a device registered before its timestamp. */
  readonly registered_at: string;
}

/**
 * What became of one send, as the pipeline acts on it:
 * - `delivered`: accepted by the provider; `provider_id` is `apns-id`, the FCM message name, the Expo ticket id or
 *   the Web Push `Location`.
 * - `retry`: try again later (429, 5xx, network); `retry_after_secs` when the provider said how long.
 * - `gone`: the token is dead; the pipeline deletes the device (for APNs only if registered before `gone_at`).
 * - `credentials`: our credentials were refused; alarm, DLQ, no device deleted.
 * - `rejected`: this push can never succeed as sent (a malformed request); recorded as failed, not retried.
 */
export type PushOutcome =
  | { readonly kind: 'delivered'; readonly provider_id: string | null }
  | { readonly kind: 'retry'; readonly reason: string; readonly retry_after_secs?: number }
  | { readonly kind: 'gone'; readonly reason: string; readonly gone_at?: string }
  | { readonly kind: 'credentials'; readonly reason: string }
  | { readonly kind: 'rejected'; readonly reason: string };

/** One provider with its credentials loaded: a module keeps tokens and HTTP/2 sessions across invocations. */
export interface PushSender {
  send(target: PushTarget, content: PushContent): Promise<PushOutcome>;
}

/** The largest payload every provider takes (APNs and FCM: 4,096 bytes; Web Push: 4,096 before encryption). */
export const PUSH_PAYLOAD_LIMIT = 4096;

/**
 * The content as the provider's payload, shrunk to fit `limit` bytes the documented way (docs/push.md): first
 * without `data`, then with the body cut (on a code point, with an ellipsis) as far as needed, then the title.
 * Null when even the empty title and body do not fit, or a silent push's data does not: the push is `rejected`,
 * never sent to earn a 413.
 */
export const fitPayload = (
  content: PushContent,
  encode: (content: PushContent) => string,
  limit: number = PUSH_PAYLOAD_LIMIT,
): { readonly payload: string; readonly shrunk: boolean } | null => {
  const fits = (candidate: PushContent) => Buffer.byteLength(encode(candidate), 'utf8') <= limit;
  if (fits(content)) return { payload: encode(content), shrunk: false };
  // A silent push is its data: without it the app would wake for nothing.
  if (content.silent) return null;
  const withoutData = { ...content, data: {} };
  for (const field of ['body', 'title'] as const) {
    const full = [...withoutData[field]];
    if (fits(withoutData)) break;
    // The longest prefix that fits, by bisection over code points.
    let low = 0;
    let high = full.length;
    while (low < high) {
      const middle = Math.ceil((low + high) / 2);
      if (fits({ ...withoutData, [field]: cut(full, middle) })) low = middle;
      else high = middle - 1;
    }
    Object.assign(withoutData, { [field]: cut(full, low) });
  }
  return fits(withoutData) ? { payload: encode(withoutData), shrunk: true } : null;
};

const cut = (codePoints: readonly string[], length: number): string =>
  length >= codePoints.length ? codePoints.join('') : `${codePoints.slice(0, length).join('')}…`;
