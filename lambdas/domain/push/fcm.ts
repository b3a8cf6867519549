import { createHash, createPrivateKey, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';
import { retryAfterSecs } from '../../core/retry-after';
import type { PushContent, PushOutcome, PushSender, PushTarget } from './provider';
import { categoryOf, fitPayload } from './provider';

/*
 * Firebase Cloud Messaging, HTTP v1 API: an OAuth 2.0 access token from the service account's JWT bearer grant
 * (RFC 7523), then one `messages:send` per push. Mapping and answer classes: docs/push.md "FCM".
 */

/** The fields of the Firebase service-account JSON (Firebase console → Project settings → Service accounts). */
export interface FcmCredentials {
  readonly type: 'service_account';
  readonly project_id: string;
  readonly private_key_id: string;
  /** PKCS#8 PEM of an RSA key. */
  readonly private_key: string;
  readonly client_email: string;
  readonly token_uri: string;
}

export interface FcmSenderOptions {
  /** FCM's base URL; default `https://fcm.googleapis.com`. */
  readonly url?: string;
  /** Where access tokens are requested (and the assertion's audience); default the credentials' `token_uri`. */
  readonly tokenUrl?: string;
  /** Milliseconds since the epoch; tests move it to reach a token's expiry. */
  readonly now?: () => number;
}

const FCM_URL = 'https://fcm.googleapis.com';
const SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Google accepts assertions that live at most an hour. */
const ASSERTION_LIFETIME_SECS = 3600;
/** A cached access token is replaced this long before it expires (half its life when it lives shorter). */
const REFRESH_MARGIN_SECS = 300;
/** One call (token request or send) that takes longer counts as a network failure: the push is retried. */
const CALL_TIMEOUT_MS = 10_000;
/** FCM keeps a message at most four weeks. */
const MAX_TTL_SECS = 28 * 24 * 3600;
/** Data keys FCM refuses with INVALID_ARGUMENT: the empty one, and those it reserves for itself. */
const REFUSED_DATA_KEY = /^$|^(from|notification|message_type)$|^(google|gcm)/i;
/** The data keys Notify sets on every push, over a same-named key of the notification's `data`. */
const NOTIFY_DATA_KEYS = ['notification_id', 'event_type', 'push_id'] as const;
/** FCM opens `webpush.fcm_options.link` only when it is an https URL (it refuses any other). */
const HTTPS_URL = /^https:\/\//i;
/** A Web Push `Topic` is at most 32 characters of the URL-safe base64 alphabet (RFC 8030 §5.4). */
const WEB_PUSH_TOPIC = /^[A-Za-z0-9_-]{1,32}$/;
/** An `apns-collapse-id` is at most 64 bytes. */
const APNS_COLLAPSE_ID_BYTES = 64;

/** Thrown by `parseFcmCredentials` and `createFcmSender`: the message names the field. */
export class FcmCredentialsError extends Error {
  override readonly name = 'FcmCredentialsError';
}

const nonEmptyString = (record: Record<string, unknown>, field: string): string => {
  const value = record[field];
  if (typeof value !== 'string' || value.trim() === '')
    throw new FcmCredentialsError(`FCM credentials: "${field}" must be a non-empty string`);
  return value;
};

const isLoopback = (host: string): boolean =>
  host === '127.0.0.1' || host === 'localhost' || host === '[::1]';

/** An https URL, or http on a loopback host (the local stand-in). */
const endpointUrl = (value: string, field: string): string => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new FcmCredentialsError(`FCM credentials: "${field}" is not a URL`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname)))
    throw new FcmCredentialsError(`FCM credentials: "${field}" must be an https URL`);
  return value;
};

/** The RSA key of a PKCS#8 PEM; throws naming `private_key`. */
const rsaPrivateKey = (pem: string): KeyObject => {
  if (!pem.includes('-----BEGIN PRIVATE KEY-----'))
    throw new FcmCredentialsError(
      'FCM credentials: "private_key" must be a PKCS#8 PEM ("BEGIN PRIVATE KEY")',
    );
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    throw new FcmCredentialsError('FCM credentials: "private_key" is not a readable PEM private key');
  }
  if (key.asymmetricKeyType !== 'rsa')
    throw new FcmCredentialsError('FCM credentials: "private_key" must be an RSA key (RS256)');
  return key;
};

/** The service-account JSON checked field by field, with its signing key. */
const readCredentials = (value: unknown): { credentials: FcmCredentials; signingKey: KeyObject } => {
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new FcmCredentialsError('FCM credentials: not JSON (expected the service-account JSON file)');
    }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new FcmCredentialsError('FCM credentials: expected the service-account JSON object');
  const record = parsed as Record<string, unknown>;
  if (record.type !== 'service_account')
    throw new FcmCredentialsError('FCM credentials: "type" must be "service_account"');
  const credentials: FcmCredentials = {
    type: 'service_account',
    project_id: nonEmptyString(record, 'project_id'),
    private_key_id: nonEmptyString(record, 'private_key_id'),
    private_key: nonEmptyString(record, 'private_key'),
    client_email: nonEmptyString(record, 'client_email'),
    token_uri: endpointUrl(nonEmptyString(record, 'token_uri'), 'token_uri'),
  };
  if (!/^[a-z0-9-]+$/i.test(credentials.project_id))
    throw new FcmCredentialsError('FCM credentials: "project_id" is not a Firebase project id');
  if (!credentials.client_email.includes('@'))
    throw new FcmCredentialsError('FCM credentials: "client_email" is not an email address');
  return { credentials, signingKey: rsaPrivateKey(credentials.private_key) };
};

/** The service-account JSON (its text, or the parsed object) checked field by field; unknown fields are ignored. */
export const parseFcmCredentials = (value: unknown): FcmCredentials => readCredentials(value).credentials;

/** A failed call that ends the send with this outcome. */
class Outcome extends Error {
  constructor(readonly outcome: PushOutcome) {
    super(outcome.kind);
  }
}

interface AccessToken {
  readonly value: string;
  /** When a send stops using it and asks for a new one (ms since the epoch). */
  readonly refreshAt: number;
}

/**
 * Access tokens per service-account key and token endpoint, module-level so that a warm container reuses them
 * across invocations and senders; `pending` is the one request in flight that concurrent sends wait on.
 */
const accessTokens = new Map<string, { current?: AccessToken; pending?: Promise<AccessToken> }>();

/** The answer's text and status, or an Outcome (retry) when the network or the deadline failed. */
const call = async (
  url: string,
  init: RequestInit,
  what: string,
): Promise<{ status: number; headers: Headers; text: string }> => {
  // A timer held here rather than AbortSignal.timeout(): it covers the body read as well.
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), CALL_TIMEOUT_MS);
  try {
    const response = await fetch(url, { ...init, redirect: 'error', signal: deadline.signal });
    return { status: response.status, headers: response.headers, text: await response.text() };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    const reason = deadline.signal.aborted
      ? 'no answer within the deadline'
      : [(error as Error).message, cause].filter(Boolean).join(': ');
    throw new Outcome({ kind: 'retry', reason: `${what}: network: ${reason}` });
  } finally {
    clearTimeout(timer);
  }
};

const jsonObject = (text: string): Record<string, unknown> => {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

/** Google's error body: `{error: {code, message, status, details: [{"@type", errorCode | fieldViolations}]}}`. */
interface GoogleError {
  readonly message: string;
  readonly status: string;
  /** The FcmError detail's `errorCode` (UNREGISTERED, SENDER_ID_MISMATCH, QUOTA_EXCEEDED...). */
  readonly errorCode: string | null;
  /** The fields a google.rpc.BadRequest detail names. */
  readonly fields: readonly string[];
}

const googleError = (text: string): GoogleError => {
  const error = jsonObject(text).error as Record<string, unknown> | undefined;
  const details = Array.isArray(error?.details) ? (error.details as Record<string, unknown>[]) : [];
  const fcmError = details.find((detail) =>
    String(detail?.['@type']).endsWith('google.firebase.fcm.v1.FcmError'),
  );
  const fields = details.flatMap((detail) =>
    Array.isArray(detail?.fieldViolations)
      ? (detail.fieldViolations as Record<string, unknown>[]).map((violation) => String(violation?.field))
      : [],
  );
  return {
    message: typeof error?.message === 'string' ? error.message : '',
    status: typeof error?.status === 'string' ? error.status : '',
    errorCode: typeof fcmError?.errorCode === 'string' ? fcmError.errorCode : null,
    fields,
  };
};

const describeError = (status: number, error: GoogleError): string =>
  [String(status), error.errorCode ?? error.status, error.message].filter(Boolean).join(' ');

/** A 400 INVALID_ARGUMENT about the registration token (FCM names the field, or says so in the message). */
const aboutTheToken = (error: GoogleError): boolean =>
  error.fields.includes('message.token') || /registration token/i.test(error.message);

/** Answers worth trying again later: throttling, timeouts and server errors. */
const transient = (status: number): boolean => status === 429 || status === 408 || status >= 500;

const retryOutcome = (reason: string, headers: Headers, now: number): PushOutcome => {
  const retryAfter = retryAfterSecs(headers.get('retry-after'), new Date(now));
  return retryAfter === undefined
    ? { kind: 'retry', reason }
    : { kind: 'retry', reason, retry_after_secs: retryAfter };
};

/** The answer to a `messages:send`, as the pipeline acts on it (docs/push.md "FCM", answer classes). */
const classify = (status: number, headers: Headers, text: string, now: number): PushOutcome => {
  if (status === 200) {
    const name = jsonObject(text).name;
    return { kind: 'delivered', provider_id: typeof name === 'string' ? name : null };
  }
  const error = googleError(text);
  const reason = describeError(status, error);
  if (transient(status)) return retryOutcome(reason, headers, now);
  if (error.errorCode === 'UNREGISTERED') return { kind: 'gone', reason };
  // A 404 without UNREGISTERED is not FCM speaking about a token: the URL or project is wrong, not the device.
  if (status === 404) return { kind: 'credentials', reason: `${reason} (check the FCM URL and project_id)` };
  // SENDER_ID_MISMATCH (403) is treated as the credentials' fault: it also answers every device of an app whose
  // service account belongs to another Firebase project, and pruning them all would be the wrong repair.
  if (status === 401 || status === 403) return { kind: 'credentials', reason };
  if (status === 400 && error.status === 'INVALID_ARGUMENT' && aboutTheToken(error))
    return { kind: 'gone', reason };
  return { kind: 'rejected', reason };
};

/** The token endpoint's answer: an access token, or the Outcome of a refusal (credentials) or failure (retry). */
const readTokenAnswer = (status: number, headers: Headers, text: string, issuedAt: number): AccessToken => {
  const answer = jsonObject(text);
  if (status === 200 && typeof answer.access_token === 'string' && typeof answer.expires_in === 'number') {
    const lifetime = answer.expires_in;
    const usable = Math.max(lifetime - REFRESH_MARGIN_SECS, lifetime / 2);
    return { value: answer.access_token, refreshAt: issuedAt + usable * 1000 };
  }
  const reason =
    `token endpoint: ${status} ${[answer.error, answer.error_description].filter((part) => typeof part === 'string' && part !== '').join(': ')}`.trim();
  // A 200 without a token is Google misbehaving, as transient as a 5xx.
  if (status === 200 || transient(status)) throw new Outcome(retryOutcome(reason, headers, issuedAt));
  // invalid_grant (signature, clock, deleted key), invalid_client, invalid_scope...: our credentials are refused.
  throw new Outcome({ kind: 'credentials', reason });
};

/**
 * FCM data values are strings: a string is sent as it is, any other JSON value as its JSON text (`42` → "42",
 * `true` → "true", `{"a":1}` → "{\"a\":1}"). Notify's own keys (`NOTIFY_DATA_KEYS`) are always set.
 */
const dataOf = (content: PushContent): Record<string, string> => {
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(content.data)) {
    if (value === undefined) continue;
    data[key] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  for (const key of NOTIFY_DATA_KEYS) data[key] = content[key];
  // The tap's target and the buttons, for the app's code (Android intent extras, iOS userInfo, the web's payload).
  if (content.receiver_id !== null) data.receiver_id = content.receiver_id;
  if (content.url !== null) data.url = content.url;
  if (content.actions.length > 0) data.actions = JSON.stringify(content.actions);
  return data;
};

/** The collapse key itself when it `fits` a header's rules, else `length` characters of its digest (stable per key). */
const digestUnless = (key: string, fits: boolean, length: number): string =>
  fits ? key : createHash('sha256').update(key).digest('base64url').slice(0, length);

/** The `message` of `messages:send` without its `token` (what the size limit is measured on). */
const messageOf = (content: PushContent, now: number): Record<string, unknown> => {
  const high = content.priority === 'high' || content.priority === 'urgent';
  const expiresAt = content.expires_at === null ? null : Date.parse(content.expires_at);
  const ttlSecs =
    expiresAt === null ? null : Math.min(MAX_TTL_SECS, Math.max(0, Math.floor((expiresAt - now) / 1000)));
  const collapse = content.collapse_key;
  const apnsHeaders: Record<string, string> = {
    'apns-push-type': content.silent ? 'background' : 'alert',
    // Apple refuses priority 10 for background pushes.
    'apns-priority': high && !content.silent ? '10' : '5',
  };
  if (expiresAt !== null) apnsHeaders['apns-expiration'] = String(Math.floor(expiresAt / 1000));
  if (collapse !== null)
    apnsHeaders['apns-collapse-id'] = digestUnless(
      collapse,
      Buffer.byteLength(collapse) <= APNS_COLLAPSE_ID_BYTES,
      43,
    );
  const webHeaders: Record<string, string> = { Urgency: high ? 'high' : 'normal' };
  if (ttlSecs !== null) webHeaders.TTL = String(ttlSecs);
  if (collapse !== null) webHeaders.Topic = digestUnless(collapse, WEB_PUSH_TOPIC.test(collapse), 32);
  // A background push carries content-available alone: with a badge or alert iOS no longer treats it as one.
  const category = categoryOf(content);
  const aps: Record<string, unknown> = content.silent
    ? { 'content-available': 1 }
    : {
        ...(content.badge === null ? {} : { badge: content.badge }),
        ...(category === null ? {} : { category }),
      };
  const link = content.url !== null && HTTPS_URL.test(content.url) ? content.url : null;
  return {
    ...(content.silent ? {} : { notification: { title: content.title, body: content.body } }),
    data: dataOf(content),
    android: {
      priority: high ? 'HIGH' : 'NORMAL',
      ...(ttlSecs === null ? {} : { ttl: `${ttlSecs}s` }),
      ...(collapse === null ? {} : { collapse_key: collapse }),
    },
    apns: { headers: apnsHeaders, payload: { aps } },
    webpush: {
      headers: webHeaders,
      // The FCM web SDK shows `webpush.notification` as Notification API options: the buttons as it takes them.
      ...(content.silent || content.actions.length === 0
        ? {}
        : {
            notification: {
              actions: content.actions.map((action) => ({ action: action.id, title: action.label })),
            },
          }),
      ...(link === null || content.silent ? {} : { fcm_options: { link } }),
    },
  };
};

/**
 * A PushSender for one Firebase project. Throws FcmCredentialsError (naming the field) for bad credentials.
 * Outcomes: 200 → delivered (the message `name`); 429, 408, 5xx and network failures → retry (with Retry-After);
 * UNREGISTERED, or INVALID_ARGUMENT about the token → gone; 401 (after one new access token), 403 (including
 * SENDER_ID_MISMATCH), a refused grant, a 404 without UNREGISTERED → credentials; any other 4xx → rejected.
 */
export const createFcmSender = (credentials: unknown, options: FcmSenderOptions = {}): PushSender => {
  const { credentials: account, signingKey } = readCredentials(credentials);
  const tokenUrl = endpointUrl(options.tokenUrl ?? account.token_uri, 'tokenUrl');
  const sendUrl = `${(options.url ?? FCM_URL).replace(/\/+$/, '')}/v1/projects/${encodeURIComponent(account.project_id)}/messages:send`;
  const now = options.now ?? Date.now;
  const cacheKey = [account.client_email, account.private_key_id, tokenUrl].join('\n');
  const cache = accessTokens.get(cacheKey) ?? {};
  accessTokens.set(cacheKey, cache);

  const requestToken = async (): Promise<AccessToken> => {
    const issuedAt = now();
    const iat = Math.floor(issuedAt / 1000);
    const assertion = await new SignJWT({ scope: SCOPE })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: account.private_key_id })
      .setIssuer(account.client_email)
      .setAudience(tokenUrl)
      .setIssuedAt(iat)
      .setExpirationTime(iat + ASSERTION_LIFETIME_SECS)
      .sign(signingKey);
    const answer = await call(
      tokenUrl,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: new URLSearchParams({ grant_type: JWT_BEARER, assertion }).toString(),
      },
      'token endpoint',
    );
    return readTokenAnswer(answer.status, answer.headers, answer.text, issuedAt);
  };

  /** The cached access token while it is fresh; otherwise the one request every concurrent send waits on. */
  const accessToken = (): Promise<AccessToken> => {
    if (cache.current && now() < cache.current.refreshAt) return Promise.resolve(cache.current);
    if (!cache.pending) {
      const pending = requestToken()
        .then((token) => {
          cache.current = token;
          return token;
        })
        .finally(() => {
          if (cache.pending === pending) cache.pending = undefined;
        });
      cache.pending = pending;
    }
    return cache.pending;
  };

  const post = async (body: string): Promise<{ outcome: PushOutcome; refused: AccessToken | null }> => {
    const token = await accessToken();
    const answer = await call(
      sendUrl,
      {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token.value}`,
          'content-type': 'application/json; charset=utf-8',
          accept: 'application/json',
        },
        body,
      },
      'messages:send',
    );
    const outcome = classify(answer.status, answer.headers, answer.text, now());
    // A 401 for our access token (not THIRD_PARTY_AUTH_ERROR, the APNs/Web Push keys in the Firebase project).
    const refused = answer.status === 401 && googleError(answer.text).errorCode === null ? token : null;
    return { outcome, refused };
  };

  return {
    async send(target: PushTarget, content: PushContent): Promise<PushOutcome> {
      const sentAt = now();
      if (content.expires_at !== null) {
        const expiresAt = Date.parse(content.expires_at);
        if (Number.isNaN(expiresAt))
          return { kind: 'rejected', reason: `expires_at "${content.expires_at}" is no time` };
        if (expiresAt <= sentAt)
          return { kind: 'rejected', reason: `expired at ${content.expires_at}, before it was sent` };
      }
      const refused = Object.keys(content.data).find((key) => REFUSED_DATA_KEY.test(key));
      if (refused !== undefined)
        return { kind: 'rejected', reason: `data key "${refused}" is refused by FCM` };
      const fitted = fitPayload(content, (candidate) => JSON.stringify(messageOf(candidate, sentAt)));
      if (!fitted)
        return { kind: 'rejected', reason: 'over the 4096-byte FCM limit even without data and text' };
      // The measured message with the token put first: `{"message":{"token":…,<the measured fields>}}`.
      const body = `{"message":{"token":${JSON.stringify(target.token)},${fitted.payload.slice(1)}}`;
      try {
        const first = await post(body);
        if (!first.refused) return first.outcome;
        // The access token was refused (revoked, or expired early): drop it unless a newer one replaced it, once.
        if (cache.current === first.refused) cache.current = undefined;
        return (await post(body)).outcome;
      } catch (error) {
        if (error instanceof Outcome) return error.outcome;
        throw error;
      }
    },
  };
};
