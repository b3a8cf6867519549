import { retryAfterSecs } from '../../core/retry-after';
import type { PushContent, PushOutcome, PushSender, PushTarget } from './provider';
import { categoryOf, fitPayload } from './provider';

/*
 * Expo's push service (React Native apps using expo-notifications): one JSON POST to `/--/api/v2/push/send` per push,
 * answered with a push ticket. Expo forwards to FCM and APNs itself; a ticket `ok` is Expo's acceptance, as APNs'
 * 200 is Apple's (receipts are not read: a dead token is reported again, as `DeviceNotRegistered`, on the next push).
 */

/** The production endpoint; the local stand-in's is set by `SERVICE__PUSH__EXPO_URL`. */
export const EXPO_URL = 'https://exp.host';
const SEND_PATH = '/--/api/v2/push/send';
/** Expo refuses a message over 4,096 bytes (ticket `MessageTooBig`): the payload is fitted below that first. */
const EXPO_MESSAGE_LIMIT = 4096;
const TIMEOUT_MS = 10_000;

/** The secret of an Expo app: an access token, needed only when the project enforces push security. */
export interface ExpoCredentials {
  readonly access_token?: string;
}

/** The Expo message of one push (Expo's documented fields; `_notify` in `data` carries the push's ids). */
const encodeMessage = (target: PushTarget, content: PushContent): string => {
  const expiresAt = content.expires_at ? Date.parse(content.expires_at) : null;
  const category = categoryOf(content);
  return JSON.stringify({
    to: target.token,
    ...(content.silent
      ? { _contentAvailable: true }
      : { title: content.title, body: content.body, sound: 'default' }),
    data: {
      ...content.data,
      _notify: {
        push_id: content.push_id,
        notification_id: content.notification_id,
        event_type: content.event_type,
        receiver_id: content.receiver_id,
        url: content.url,
        actions: content.actions,
      },
    },
    // The buttons: expo-notifications shows the category the app set with setNotificationCategoryAsync.
    ...(category === null ? {} : { categoryId: category }),
    priority: content.priority === 'high' || content.priority === 'urgent' ? 'high' : 'default',
    ...(expiresAt === null ? {} : { expiration: Math.floor(expiresAt / 1000) }),
    ...(content.badge === null ? {} : { badge: content.badge }),
  });
};

interface ExpoTicket {
  readonly status?: string;
  readonly id?: string;
  readonly message?: string;
  readonly details?: { readonly error?: string };
}

/** A ticket as the pipeline acts on it (Expo's ticket error codes). */
const ticketOutcome = (ticket: ExpoTicket | undefined): PushOutcome => {
  if (ticket?.status === 'ok') return { kind: 'delivered', provider_id: ticket.id ?? null };
  const code = ticket?.details?.error ?? 'unknown';
  const reason = `expo ${code}: ${ticket?.message ?? 'no message'}`;
  switch (code) {
    case 'DeviceNotRegistered':
      return { kind: 'gone', reason };
    case 'MessageRateExceeded':
      return { kind: 'retry', reason };
    case 'InvalidCredentials':
    case 'MismatchSenderId':
      return { kind: 'credentials', reason };
    default:
      return { kind: 'rejected', reason };
  }
};

const errorsOf = (body: unknown): string => {
  const errors = (body as { errors?: { code?: string; message?: string }[] } | null)?.errors;
  const first = Array.isArray(errors) ? errors[0] : undefined;
  return first ? `${first.code ?? 'error'}: ${first.message ?? ''}` : 'no error body';
};

/** The sender of Expo pushes with one app's credentials; `url` is the service's base URL. */
export const createExpoSender = (
  credentials: ExpoCredentials,
  options: { readonly url?: string } = {},
): PushSender => {
  const endpoint = new URL(SEND_PATH, options.url ?? EXPO_URL).toString();
  return {
    send: async (target, content) => {
      const fitted = fitPayload(content, (candidate) => encodeMessage(target, candidate), EXPO_MESSAGE_LIMIT);
      if (!fitted) return { kind: 'rejected', reason: 'too large for expo even without data and body' };
      let response: Response;
      try {
        response = await fetch(endpoint, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            ...(credentials.access_token ? { authorization: `Bearer ${credentials.access_token}` } : {}),
          },
          body: `[${fitted.payload}]`,
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
      } catch (error) {
        return { kind: 'retry', reason: `expo unreachable: ${(error as Error).message}` };
      }
      const body: unknown = await response.json().catch(() => null);
      const status = response.status;
      if (status === 429 || status >= 500) {
        const after = retryAfterSecs(response.headers.get('retry-after'), new Date());
        return {
          kind: 'retry',
          reason: `expo HTTP ${status}: ${errorsOf(body)}`,
          ...(after === undefined ? {} : { retry_after_secs: after }),
        };
      }
      if (status === 401 || status === 403) {
        return { kind: 'credentials', reason: `expo HTTP ${status}: ${errorsOf(body)}` };
      }
      if (status !== 200) return { kind: 'rejected', reason: `expo HTTP ${status}: ${errorsOf(body)}` };
      const tickets = (body as { data?: unknown } | null)?.data;
      if (!Array.isArray(tickets)) return { kind: 'retry', reason: 'expo answered 200 without tickets' };
      return ticketOutcome(tickets[0] as ExpoTicket | undefined);
    },
  };
};
