import { createHash, createPrivateKey, type KeyObject } from 'node:crypto';
import { type ClientHttp2Session, connect, constants as http2Constants } from 'node:http2';
import { SignJWT } from 'jose';
import { retryAfterSecs } from '../../core/retry-after';
import type { PushContent, PushOutcome, PushSender, PushTarget } from './provider';
import { categoryOf, fitPayload } from './provider';

/*
 * The APNs provider API (docs/push.md "APNs"): one POST per push over HTTP/2 with token-based authentication.
 * Provider tokens and HTTP/2 sessions live at module level, so a warm function reuses them across invocations
 * and across the senders of one container.
 */

/** The secret's JSON for an app's APNs key: the .p8 key with its key id, the team and the app's bundle id. */
export interface ApnsCredentials {
  readonly key_id: string;
  readonly team_id: string;
  readonly bundle_id: string;
  /** The .p8 file's text: a PKCS#8 PEM of a P-256 key. */
  readonly private_key: string;
}

export interface ApnsSenderOptions {
  /** Where production devices' pushes go (and sandbox ones', unless `sandboxUrl` is given); default Apple's. */
  readonly url?: string;
  /** Where sandbox devices' pushes go; default `url` when given (a local stand-in serves both), else Apple's. */
  readonly sandboxUrl?: string;
  /** The only CA certificate (PEM) trusted instead of Node's roots: a local stand-in's. */
  readonly ca?: string;
  /** Milliseconds since the epoch: the provider token's age and a session's idle time are read from it. */
  readonly now?: () => number;
  /** How long one request may take before its session is dropped and the push retried. */
  readonly timeoutMs?: number;
}

const APPLE_ORIGINS = {
  production: 'https://api.push.apple.com',
  sandbox: 'https://api.sandbox.push.apple.com',
} as const;

/** Apple refuses a token older than an hour and refreshes more often than every 20 minutes (TooManyProviderTokenUpdates). */
const TOKEN_REFRESH_AFTER_MS = 50 * 60_000;
const TOKEN_MIN_LIFE_MS = 20 * 60_000;
/**
 * A session idle this long is replaced rather than reused: a frozen function's connection is likely dropped by
 * then (a NAT gateway forgets idle flows after 350 s) and a request on it would only wait for the timeout.
 */
const SESSION_MAX_IDLE_MS = 5 * 60_000;
const DEFAULT_TIMEOUT_MS = 10_000;
/** `apns-collapse-id` is at most 64 bytes. */
const COLLAPSE_ID_MAX_BYTES = 64;
/** Error bodies are a small JSON object; anything longer is read no further. */
const MAX_ANSWER_BYTES = 16 * 1024;
const KEY_OR_TEAM_ID = /^[A-Z0-9]{10}$/;
const BUNDLE_ID = /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/;
const DEVICE_TOKEN = /^[0-9a-fA-F]+$/;

/** Thrown by `parseApnsCredentials` and `createApnsSender`: the message names the field. */
export class ApnsCredentialsError extends Error {
  override readonly name = 'ApnsCredentialsError';
}

const credentialsError = (field: string, requirement: string) =>
  new ApnsCredentialsError(`APNs credentials: ${field} ${requirement}`);

/** Checks an app's APNs secret, naming the first field that is wrong. The key must load as P-256. */
export const parseApnsCredentials = (value: unknown): ApnsCredentials => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApnsCredentialsError(
      'APNs credentials: must be a JSON object {key_id, team_id, bundle_id, private_key}',
    );
  }
  const record = value as Record<string, unknown>;
  const text = (field: keyof ApnsCredentials): string => {
    const field_value = record[field];
    if (typeof field_value !== 'string' || field_value.trim() === '') {
      throw credentialsError(field, 'is missing (a non-empty string)');
    }
    return field_value;
  };
  const key_id = text('key_id');
  if (!KEY_OR_TEAM_ID.test(key_id)) {
    throw credentialsError('key_id', 'must be the 10-character Key ID of the .p8 key (A-Z, 0-9)');
  }
  const team_id = text('team_id');
  if (!KEY_OR_TEAM_ID.test(team_id)) {
    throw credentialsError('team_id', 'must be the 10-character Team ID (A-Z, 0-9)');
  }
  const bundle_id = text('bundle_id');
  if (!BUNDLE_ID.test(bundle_id)) {
    throw credentialsError('bundle_id', 'must be the app’s bundle id, e.g. com.example.app');
  }
  const private_key = text('private_key');
  loadSigningKey(private_key);
  return { key_id, team_id, bundle_id, private_key };
};

const loadSigningKey = (pem: string): KeyObject => {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    throw credentialsError('private_key', 'must be the .p8 file’s PEM text (PKCS#8, BEGIN PRIVATE KEY)');
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw credentialsError('private_key', 'must be a P-256 (ES256) key, as Apple issues .p8 keys');
  }
  return key;
};

// --- Provider tokens --------------------------------------------------------------------------------------

interface ProviderToken {
  readonly jwt: string;
  readonly issuedAtMs: number;
}

/** Per team and key: every sender of a container shares one token, so it is minted at most once per window. */
const providerTokens = new Map<string, ProviderToken | Promise<ProviderToken>>();

const providerTokenSource = (credentials: ApnsCredentials, clock: () => number) => {
  const signingKey = loadSigningKey(credentials.private_key);
  const cacheKey = `${credentials.team_id}.${credentials.key_id}.${fingerprint(credentials.private_key)}`;
  const mint = (): Promise<ProviderToken> => {
    const issuedAtMs = clock();
    const minting = new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: credentials.key_id })
      .setIssuer(credentials.team_id)
      .setIssuedAt(Math.floor(issuedAtMs / 1000))
      .sign(signingKey)
      .then((jwt) => {
        const token = { jwt, issuedAtMs };
        providerTokens.set(cacheKey, token);
        return token;
      });
    providerTokens.set(cacheKey, minting);
    minting.catch(() => providerTokens.delete(cacheKey));
    return minting;
  };
  // Decided without awaiting: a send that finds a token being minted waits for it rather than minting its own.
  return {
    /** The cached token while it is younger than the refresh age, otherwise a new one. */
    current: (): Promise<ProviderToken> => {
      const cached = providerTokens.get(cacheKey);
      if (cached instanceof Promise) return cached;
      if (cached && clock() - cached.issuedAtMs < TOKEN_REFRESH_AFTER_MS) return Promise.resolve(cached);
      return mint();
    },
    /**
     * The token to retry with after APNs called `refused` expired: one another send minted meanwhile, or a new
     * one if `refused` is at least 20 minutes old. Null when it is younger: a new token would be refused too
     * (our clock is off) and minting again would earn TooManyProviderTokenUpdates.
     */
    replacing: (refused: ProviderToken): Promise<ProviderToken | null> => {
      const cached = providerTokens.get(cacheKey);
      if (cached instanceof Promise) return cached;
      if (cached && cached.jwt !== refused.jwt) return Promise.resolve(cached);
      if (clock() - refused.issuedAtMs < TOKEN_MIN_LIFE_MS) return Promise.resolve(null);
      return mint();
    },
  };
};

const fingerprint = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

// --- HTTP/2 sessions --------------------------------------------------------------------------------------

interface Connection {
  readonly session: ClientHttp2Session;
  inFlight: number;
  lastUsedMs: number;
  /** Settles with the first request's answer; null until a request was sent. */
  firstAnswer: Promise<void> | null;
}

/**
 * Per origin, CA and key: APNs binds a connection to the key of its first request (UnrelatedKeyIdInToken).
 * A session leaves the map when it closes, fails or receives GOAWAY; the next push opens a new one.
 */
const connections = new Map<string, Connection>();

const connectionFor = (origin: string, ca: string | undefined, keyId: string, nowMs: number): Connection => {
  const mapKey = `${origin} ${keyId} ${ca ? fingerprint(ca) : 'roots'}`;
  const existing = connections.get(mapKey);
  if (existing && !existing.session.closed && !existing.session.destroyed) {
    if (existing.inFlight > 0 || nowMs - existing.lastUsedMs < SESSION_MAX_IDLE_MS) return existing;
    existing.session.close();
  }
  connections.delete(mapKey);
  const session = connect(origin, ca ? { ca } : {});
  // Idle, the session must not keep the process alive (a local run would never exit); Lambda freezes it anyway.
  session.unref();
  const connection: Connection = { session, inFlight: 0, lastUsedMs: nowMs, firstAnswer: null };
  const forget = () => {
    if (connections.get(mapKey) === connection) connections.delete(mapKey);
  };
  session.on('goaway', forget);
  session.on('close', forget);
  // A failed connect or a reset: the requests on it see the error themselves and are retried.
  session.on('error', forget);
  connections.set(mapKey, connection);
  return connection;
};

/**
 * No answer: `refused` when the server refused the stream (REFUSED_STREAM, as after a GOAWAY), which HTTP/2
 * guarantees it did not process, so sending again cannot deliver twice.
 */
interface Failure {
  readonly failure: string;
  readonly refused: boolean;
}

interface Answer {
  readonly status: number;
  readonly apnsId: string | null;
  readonly retryAfter: string | null;
  readonly body: string;
}

/** One POST on `connection`: its answer, or the reason no answer came (connection lost, refused stream, timeout). */
const post = (
  connection: Connection,
  headers: Readonly<Record<string, string>>,
  body: string,
  timeoutMs: number,
): Promise<Answer | Failure> =>
  new Promise((resolve) => {
    const { session } = connection;
    connection.inFlight += 1;
    if (connection.inFlight === 1) session.ref();
    let settled = false;
    const finish = (result: Answer | Failure) => {
      if (settled) return;
      settled = true;
      connection.inFlight -= 1;
      if (connection.inFlight === 0 && !session.destroyed) session.unref();
      resolve(result);
    };
    let stream: ReturnType<ClientHttp2Session['request']>;
    try {
      stream = session.request({
        ...headers,
        ':method': 'POST',
        'content-length': String(Buffer.byteLength(body, 'utf8')),
      });
    } catch (error) {
      finish({ failure: (error as Error).message, refused: false });
      return;
    }
    let status = 0;
    let apnsId: string | null = null;
    let retryAfter: string | null = null;
    const chunks: Buffer[] = [];
    let read = 0;
    stream.setTimeout(timeoutMs, () => {
      // No answer in time: the connection is suspect (a frozen function's dropped socket), so it is not reused.
      session.destroy();
      finish({ failure: `no answer within ${timeoutMs} ms`, refused: false });
    });
    stream.on('response', (responseHeaders) => {
      status = Number(responseHeaders[':status']);
      apnsId = headerText(responseHeaders['apns-id']);
      retryAfter = headerText(responseHeaders['retry-after']);
    });
    stream.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read <= MAX_ANSWER_BYTES) chunks.push(chunk);
    });
    stream.on('end', () =>
      finish(
        status
          ? { status, apnsId, retryAfter, body: Buffer.concat(chunks).toString('utf8') }
          : { failure: 'the stream ended without an answer', refused: false },
      ),
    );
    const refused = () => stream.rstCode === http2Constants.NGHTTP2_REFUSED_STREAM;
    stream.on('error', (error) => finish({ failure: error.message, refused: refused() }));
    stream.on('close', () => {
      if (status) finish({ status, apnsId, retryAfter, body: Buffer.concat(chunks).toString('utf8') });
      else
        finish({
          failure: `the stream closed without an answer (HTTP/2 code ${stream.rstCode})`,
          refused: refused(),
        });
    });
    stream.end(body);
  });

const headerText = (value: string | string[] | undefined): string | null =>
  Array.isArray(value) ? (value[0] ?? null) : (value ?? null);

// --- Mapping ----------------------------------------------------------------------------------------------

/**
 * The payload: Apple's `aps` dictionary, then our keys beside it. Alert pushes show title and body, set the
 * badge when the content has one and play the default sound unless the priority is low; a silent push is
 * `content-available` alone (Apple: no alert, badge or sound in a background push).
 */
const encodePayload = (content: PushContent): string => {
  const category = categoryOf(content);
  return JSON.stringify({
    aps: content.silent
      ? { 'content-available': 1 }
      : {
          alert: { title: content.title, body: content.body },
          ...(content.badge === null ? {} : { badge: content.badge }),
          ...(content.priority === 'low' ? {} : { sound: 'default' }),
          // The buttons: iOS shows the registered UNNotificationCategory of this identifier.
          ...(category === null ? {} : { category }),
        },
    notification_id: content.notification_id,
    // The app drops a repeat by it: a push resent after a crash carries the same id (apns-id is a header it never sees).
    push_id: content.push_id,
    event_type: content.event_type,
    receiver_id: content.receiver_id,
    ...(content.url === null ? {} : { url: content.url }),
    ...(content.actions.length === 0 ? {} : { actions: content.actions }),
    data: content.data,
  });
};

/** A key longer than APNs takes is sent as its SHA-256 (64 hex digits): still stable, still distinct. */
const collapseId = (key: string): string =>
  Buffer.byteLength(key, 'utf8') <= COLLAPSE_ID_MAX_BYTES
    ? key
    : createHash('sha256').update(key, 'utf8').digest('hex');

const requestHeaders = (
  credentials: ApnsCredentials,
  target: PushTarget,
  content: PushContent,
  expiration: number | null,
): Record<string, string> => {
  const high = content.priority === 'high' || content.priority === 'urgent';
  return {
    ':path': `/3/device/${target.token}`,
    'apns-topic': credentials.bundle_id,
    'apns-push-type': content.silent ? 'background' : 'alert',
    // Apple: a background push must be priority 5.
    'apns-priority': high && !content.silent ? '10' : '5',
    'apns-id': content.push_id,
    ...(expiration === null ? {} : { 'apns-expiration': String(expiration) }),
    ...(content.collapse_key ? { 'apns-collapse-id': collapseId(content.collapse_key) } : {}),
    'content-type': 'application/json',
  };
};

// --- Classification ---------------------------------------------------------------------------------------

/** Answers that say our configuration is wrong for every push of the app: alarm, not a per-device failure. */
const CONFIGURATION_REASONS = new Set(['TopicDisallowed', 'BadTopic', 'MissingTopic']);

const readReason = (body: string): { reason: string | null; timestamp: number | null } => {
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed !== 'object' || parsed === null) return { reason: null, timestamp: null };
    const { reason, timestamp } = parsed as { reason?: unknown; timestamp?: unknown };
    return {
      reason: typeof reason === 'string' ? reason : null,
      timestamp: typeof timestamp === 'number' && Number.isFinite(timestamp) ? timestamp : null,
    };
  } catch {
    return { reason: null, timestamp: null };
  }
};

/** What an APNs answer means for the pipeline (docs/push.md "APNs": the classification table). */
const classify = (answer: Answer, nowMs: number): PushOutcome => {
  if (answer.status === 200) return { kind: 'delivered', provider_id: answer.apnsId };
  const { reason: given, timestamp } = readReason(answer.body);
  const reason = given ?? `HTTP ${answer.status}`;
  const retry = (): PushOutcome => {
    const after = retryAfterSecs(answer.retryAfter, new Date(nowMs));
    return { kind: 'retry', reason, ...(after === undefined ? {} : { retry_after_secs: after }) };
  };
  switch (answer.status) {
    case 410:
      // Unregistered (or ExpiredToken): the timestamp (ms) is when APNs last knew the token invalid.
      return {
        kind: 'gone',
        reason,
        ...(timestamp === null ? {} : { gone_at: new Date(timestamp).toISOString() }),
      };
    case 400:
      // Malformed, or valid only in the other environment (a development build registered as production): this
      // push can never go, but the device is kept — Apple has not said the token is dead, and the owner can fix
      // the registration (apns_environment).
      if (given === 'BadDeviceToken') return { kind: 'rejected', reason };
      if (given !== null && CONFIGURATION_REASONS.has(given)) return { kind: 'credentials', reason };
      // The connection idled out before the request: a new one will take it.
      if (given === 'IdleTimeout') return retry();
      return { kind: 'rejected', reason };
    case 403:
      return { kind: 'credentials', reason };
    case 429:
      return retry();
    default:
      return answer.status >= 500 ? retry() : { kind: 'rejected', reason };
  }
};

// --- The sender -------------------------------------------------------------------------------------------

/** A PushSender for one app's APNs key (the secret's JSON); throws, naming the field, when it is wrong. */
export const createApnsSender = (credentials: unknown, options: ApnsSenderOptions = {}): PushSender => {
  const checked = parseApnsCredentials(credentials);
  const clock = options.now ?? Date.now;
  const origins = {
    production: options.url ?? APPLE_ORIGINS.production,
    sandbox: options.sandboxUrl ?? options.url ?? APPLE_ORIGINS.sandbox,
  };
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const tokens = providerTokenSource(checked, clock);

  const attempt = async (
    origin: string,
    headers: Readonly<Record<string, string>>,
    body: string,
    token: ProviderToken,
  ) => {
    const connection = connectionFor(origin, options.ca, checked.key_id, clock());
    const withToken = { ...headers, authorization: `bearer ${token.jwt}` };
    let answer: Awaited<ReturnType<typeof post>>;
    if (connection.firstAnswer) {
      // APNs takes one stream on a new connection until a request carries a valid provider token: the others
      // wait for the first answer instead of being refused (REFUSED_STREAM) while they race it.
      await connection.firstAnswer;
      answer = await post(connection, withToken, body, timeoutMs);
    } else {
      const first = post(connection, withToken, body, timeoutMs);
      connection.firstAnswer = first.then(() => undefined);
      answer = await first;
    }
    connection.lastUsedMs = clock();
    return answer;
  };

  return {
    async send(target, content) {
      // The token goes into the request path: anything but hex is no APNs token (APNs would say BadDeviceToken).
      if (!DEVICE_TOKEN.test(target.token)) return { kind: 'rejected', reason: 'BadDeviceToken' };
      let expiration: number | null = null;
      if (content.expires_at !== null) {
        const expiresMs = Date.parse(content.expires_at);
        if (Number.isNaN(expiresMs)) return { kind: 'rejected', reason: 'expires_at is not a date' };
        if (expiresMs <= clock()) return { kind: 'rejected', reason: 'expired before it was sent' };
        expiration = Math.floor(expiresMs / 1000);
      }
      const fitted = fitPayload(content, encodePayload);
      if (!fitted)
        return { kind: 'rejected', reason: 'PayloadTooLarge: even an empty title and body do not fit' };
      const origin = origins[target.apns_environment ?? 'production'];
      const headers = requestHeaders(checked, target, content, expiration);

      let token = await tokens.current();
      let answer = await attempt(origin, headers, fitted.payload, token);
      // A refused stream was not processed: once more at once, on a new connection when the old one is going away.
      if ('failure' in answer && answer.refused)
        answer = await attempt(origin, headers, fitted.payload, token);
      if ('status' in answer && answer.status === 403) {
        if (readReason(answer.body).reason === 'ExpiredProviderToken') {
          const replacement = await tokens.replacing(token);
          if (replacement) {
            token = replacement;
            answer = await attempt(origin, headers, fitted.payload, token);
          }
        }
      }
      if ('failure' in answer) {
        return { kind: 'retry', reason: `no answer from APNs: ${answer.failure}` };
      }
      return classify(answer, clock());
    },
  };
};
