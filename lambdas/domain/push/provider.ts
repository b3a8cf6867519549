import type { Priority } from '../notifications/shared-fields';

/*
 * The one interface between the push pipeline (who gets a push, exactly once, what happened) and the providers
 * (how one push goes over one provider's wire). A provider module maps `PushContent` to its wire format, sends it,
 * and classifies the answer; it never touches DynamoDB or SQS.
 */

/** The push services Notify speaks. */
export const PUSH_PROVIDERS = ['fcm', 'apns', 'webpush', 'expo'] as const;
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
  /**
   * The recipient's feed item (its receiver id): what the app marks read and reports a click on with
   * `POST /notifications/{receiver_id}/interact`. Null when the notification writes no feed item (no `in_app`).
   */
  readonly receiver_id: string | null;
  /** The primary link: where a tap on the push leads. Null: the app opens the item itself. */
  readonly url: string | null;
  /** The buttons, in order: a link (`url`) or, with `url` null, a backend action the app reports as a click. */
  readonly actions: readonly PushAction[];
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

/** A button of a push: the notification's action as the feed shows it. */
export interface PushAction {
  readonly id: string;
  readonly label: string;
  readonly url: string | null;
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
 * The content as the provider's payload, shrunk to fit `limit` bytes the documented way (docs/push.md, "Over 4 KB"),
 * each step only when the one before was not enough: without `data`; without the buttons; with the body cut (on
 * a code point, with an ellipsis) to the longest that fits; without the link `url` (the body cut again from its
 * whole text); with the title cut. The ids (`notification_id`, `push_id`, `receiver_id`) are never dropped: a tap
 * still opens the item. A silent push is its data: it only loses its buttons and link, else it does not fit.
 * Null when nothing fits: the push is `rejected`, never sent to earn a 413. Every step is a fixed number of
 * encodings (bisection), so shrinking never loops.
 */
export const fitPayload = (
  content: PushContent,
  encode: (content: PushContent) => string,
  limit: number = PUSH_PAYLOAD_LIMIT,
): { readonly payload: string; readonly shrunk: boolean } | null => {
  const fits = (candidate: PushContent) => Buffer.byteLength(encode(candidate), 'utf8') <= limit;
  const fitted = (candidate: PushContent) => ({ payload: encode(candidate), shrunk: candidate !== content });
  if (fits(content)) return fitted(content);
  const withoutButtons = (candidate: PushContent): PushContent => ({ ...candidate, actions: [] });
  const withoutLink = (candidate: PushContent): PushContent => ({ ...candidate, url: null });
  if (content.silent) {
    const bare = [withoutButtons(content), withoutLink(withoutButtons(content))].find(fits);
    return bare ? fitted(bare) : null;
  }
  const withoutData: PushContent = { ...content, data: {} };
  if (fits(withoutData)) return fitted(withoutData);
  const plain = withoutButtons(withoutData);
  if (fits(plain)) return fitted(plain);
  for (const candidate of [plain, withoutLink(plain)]) {
    const cutBody = cutToFit(candidate, 'body', fits);
    if (fits(cutBody)) return fitted(cutBody);
  }
  const titleOnly = cutToFit({ ...withoutLink(plain), body: '' }, 'title', fits);
  return fits(titleOnly) ? fitted(titleOnly) : null;
};

/** `content` with `field` cut to the longest prefix (in code points, with an ellipsis) that `fits`, by bisection. */
const cutToFit = (
  content: PushContent,
  field: 'body' | 'title',
  fits: (candidate: PushContent) => boolean,
): PushContent => {
  const full = [...content[field]];
  let low = 0;
  let high = full.length;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (fits({ ...content, [field]: cut(full, middle) })) low = middle;
    else high = middle - 1;
  }
  return { ...content, [field]: cut(full, low) };
};

const cut = (codePoints: readonly string[], length: number): string =>
  length >= codePoints.length ? codePoints.join('') : `${codePoints.slice(0, length).join('')}…`;

/**
 * The category of a push's buttons (APNs `aps.category`, also through FCM; Expo `categoryId`): the buttons' ids
 * joined by `.` in their order (`approve.reject`; ids never hold a dot). An app registers one category per set
 * of buttons its notifications carry (docs/push.md, "Links and buttons"). Null without buttons, and for a silent
 * push, which shows nothing to press.
 */
export const categoryOf = (content: PushContent): string | null =>
  content.silent || content.actions.length === 0
    ? null
    : content.actions.map((action) => action.id).join('.');
