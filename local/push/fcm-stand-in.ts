import { createPublicKey, generateKeyPairSync, type KeyObject, randomBytes, randomUUID } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import { type HttpReply, type HttpRequest, jsonReply, startLoopbackServer } from '../aws-http';
import type { PushStandIn, ReceivedPush } from './stand-in';

/**
 * A local Firebase Cloud Messaging (HTTP v1) with its own Google OAuth 2.0 token endpoint:
 * - `POST /token` takes the service account's JWT bearer grant (RFC 7523), checks the assertion's RS256
 *   signature against the generated account's public key, its `kid`, `iss`, `aud`, `scope`, `iat` and `exp`, and
 *   issues access tokens that expire;
 * - `POST /v1/projects/{project_id}/messages:send` checks the bearer token, the project, the v1 `message`
 *   (only the fields FCM defines, string data values, reserved data keys, enums and durations) and its size,
 *   and answers as FCM does: `{name}`, or Google's error body with an FcmError `errorCode`.
 * Tokens marked dead answer 404 UNREGISTERED; a token that is not token-shaped answers 400 INVALID_ARGUMENT.
 */

export interface FcmServiceAccount {
  readonly type: 'service_account';
  readonly project_id: string;
  readonly private_key_id: string;
  readonly private_key: string;
  readonly client_email: string;
  readonly client_id: string;
  readonly auth_uri: string;
  readonly token_uri: string;
}

/** An answer given instead of the endpoint's own (see `failNext`). */
export interface FcmFault {
  readonly status: number;
  /**
   * `messages:send`: the FcmError `errorCode` detail (UNREGISTERED, QUOTA_EXCEEDED, SENDER_ID_MISMATCH,
   * THIRD_PARTY_AUTH_ERROR...); the token endpoint: the OAuth `error` (default `temporarily_unavailable`).
   */
  readonly errorCode?: string;
  /** A google.rpc.BadRequest detail naming this field. */
  readonly field?: string;
  readonly message?: string;
  /** Sent as `Retry-After` (seconds). */
  readonly retryAfter?: number;
}

/** One `messages:send` request and how it was answered. */
export interface FcmAnswer {
  readonly status: number;
  readonly errorCode: string | null;
  /** Bytes of the message as the size limit counts them (its JSON without `token`); null when unreadable. */
  readonly messageBytes: number | null;
}

export interface FcmStandIn extends PushStandIn {
  /** The service-account JSON object, its `token_uri` pointing here (what the FCM secret holds). */
  readonly credentials: FcmServiceAccount;
  /** The account's key pair (the private key is also `credentials.private_key`). */
  readonly keys: { readonly privateKey: KeyObject; readonly publicKey: KeyObject };
  /** Access tokens issued so far. */
  tokensIssued(): number;
  /** Every `messages:send` answer so far, in order. */
  answers(): readonly FcmAnswer[];
  /** Every access token issued so far stops working (401 UNAUTHENTICATED), as at their expiry. */
  expireAccessTokens(): void;
  /** The next `count` requests to `endpoint` (for `messages:send`: with a valid access token) get `fault`. */
  failNext(count: number, fault: FcmFault, endpoint?: 'messages:send' | 'token'): void;
}

export interface FcmStandInOptions {
  readonly projectId?: string;
  /** `expires_in` of the access tokens issued (Google's: 3599). */
  readonly accessTokenLifetimeSecs?: number;
  /** Milliseconds since the epoch, for the assertion's and the access tokens' times. */
  readonly now?: () => number;
  /** The account's RSA key (default: a new one); tests share one, as generating it takes a while. */
  readonly privateKey?: KeyObject;
}

const SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const SIZE_LIMIT = 4096;
/** Google's allowance for clocks: an assertion issued up to this far ahead is still taken. */
const CLOCK_SKEW_SECS = 60;
const MAX_TTL_SECS = 28 * 24 * 3600;
const RESERVED_DATA_KEY = /^(from|notification|message_type)$|^(google|gcm)/i;
const REGISTRATION_TOKEN = /^[A-Za-z0-9_:-]{1,4096}$/;

const STATUS_NAMES: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

const withRetryAfter = (reply: HttpReply, secs: number | undefined): HttpReply =>
  secs === undefined ? reply : { ...reply, headers: { ...reply.headers, 'retry-after': String(secs) } };

const googleError = (
  status: number,
  message: string,
  extras: { errorCode?: string; field?: string; retryAfter?: number } = {},
): HttpReply => {
  const details: unknown[] = [];
  if (extras.errorCode)
    details.push({
      '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError',
      errorCode: extras.errorCode,
    });
  if (extras.field)
    details.push({
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: [{ field: extras.field, description: message }],
    });
  const reply = jsonReply(status, 'application/json; charset=UTF-8', {
    error: {
      code: status,
      message,
      status: STATUS_NAMES[status] ?? 'UNKNOWN',
      ...(details.length > 0 ? { details } : {}),
    },
  });
  return withRetryAfter(reply, extras.retryAfter);
};

/** A 400 for a message FCM would not parse, naming the field as Google does. */
class InvalidMessage extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** How a field of the v1 message is checked (proto JSON: snake_case or lowerCamelCase names). */
type Shape =
  | 'string'
  | 'boolean'
  | 'integer'
  | 'string-map'
  | 'struct'
  | 'strings'
  | 'duration'
  | 'android-priority'
  | { readonly [field: string]: Shape };

const ANDROID_NOTIFICATION: Shape = Object.fromEntries([
  ['title', 'string'],
  ['body', 'string'],
  ['icon', 'string'],
  ['color', 'string'],
  ['sound', 'string'],
  ['tag', 'string'],
  ['click_action', 'string'],
  ['body_loc_key', 'string'],
  ['body_loc_args', 'strings'],
  ['title_loc_key', 'string'],
  ['title_loc_args', 'strings'],
  ['channel_id', 'string'],
  ['ticker', 'string'],
  ['sticky', 'boolean'],
  ['event_time', 'string'],
  ['local_only', 'boolean'],
  ['notification_priority', 'string'],
  ['default_sound', 'boolean'],
  ['default_vibrate_timings', 'boolean'],
  ['default_light_settings', 'boolean'],
  ['vibrate_timings', 'strings'],
  ['visibility', 'string'],
  ['notification_count', 'integer'],
  ['light_settings', 'struct'],
  ['image', 'string'],
  ['bypass_proxy_notification', 'boolean'],
  ['proxy', 'string'],
] as const);

/** google.firebase.fcm.v1.Message as FCM's reference defines it. */
const MESSAGE: Shape = {
  name: 'string',
  data: 'string-map',
  notification: { title: 'string', body: 'string', image: 'string' },
  android: {
    collapse_key: 'string',
    priority: 'android-priority',
    ttl: 'duration',
    restricted_package_name: 'string',
    data: 'string-map',
    notification: ANDROID_NOTIFICATION,
    fcm_options: { analytics_label: 'string' },
    direct_boot_ok: 'boolean',
    bandwidth_constrained_ok: 'boolean',
    restricted_satellite_ok: 'boolean',
  },
  webpush: {
    headers: 'string-map',
    data: 'string-map',
    notification: 'struct',
    fcm_options: { link: 'string', analytics_label: 'string' },
  },
  apns: {
    headers: 'string-map',
    payload: 'struct',
    fcm_options: { analytics_label: 'string', image: 'string' },
    live_activity_token: 'string',
  },
  fcm_options: { analytics_label: 'string' },
  token: 'string',
  topic: 'string',
  condition: 'string',
};

const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Checks `value` at `path` against `shape`; throws InvalidMessage with Google's wording. */
const check = (value: unknown, shape: Shape, path: string): void => {
  const invalid = (type: string) =>
    new InvalidMessage(path, `Invalid value at '${path}' (${type}), ${JSON.stringify(value)}`);
  if (typeof shape === 'object') {
    if (!isObject(value)) throw invalid('TYPE_MESSAGE');
    for (const [key, inner] of Object.entries(value)) {
      const field = shape[snakeCase(key)];
      if (field === undefined)
        throw new InvalidMessage(
          path,
          `Invalid JSON payload received. Unknown name "${key}" at '${path}': Cannot find field.`,
        );
      check(inner, field, `${path}.${snakeCase(key)}`);
    }
    return;
  }
  switch (shape) {
    case 'string':
      if (typeof value !== 'string') throw invalid('TYPE_STRING');
      return;
    case 'boolean':
      if (typeof value !== 'boolean') throw invalid('TYPE_BOOL');
      return;
    case 'integer':
      if (!Number.isInteger(value)) throw invalid('TYPE_INT32');
      return;
    case 'struct':
      if (!isObject(value)) throw invalid('TYPE_MESSAGE');
      return;
    case 'strings':
      if (!Array.isArray(value) || value.some((item) => typeof item !== 'string'))
        throw invalid('TYPE_STRING');
      return;
    case 'string-map': {
      if (!isObject(value)) throw invalid('TYPE_MESSAGE');
      Object.entries(value).forEach(([key, item], index) => {
        if (typeof item !== 'string')
          throw new InvalidMessage(
            `${path}[${index}].value`,
            `Invalid value at '${path}[${index}].value' (TYPE_STRING), ${JSON.stringify(item)}`,
          );
        if (key === '') throw new InvalidMessage(`${path}[${index}].key`, `Invalid data key at '${path}'`);
      });
      return;
    }
    case 'duration': {
      const match = typeof value === 'string' ? /^(\d+)(\.\d{1,9})?s$/.exec(value) : null;
      if (!match)
        throw new InvalidMessage(
          path,
          `Invalid value at '${path}' (type.googleapis.com/google.protobuf.Duration), ${JSON.stringify(value)}`,
        );
      if (Number(match[1]) > MAX_TTL_SECS)
        throw new InvalidMessage(path, `Invalid ttl: at most ${MAX_TTL_SECS}s (4 weeks)`);
      return;
    }
    case 'android-priority':
      if (value !== 'NORMAL' && value !== 'HIGH')
        throw invalid('type.googleapis.com/google.firebase.fcm.v1.AndroidMessagePriority');
      return;
  }
};

const objectAt = (value: unknown, ...path: string[]): Record<string, unknown> | undefined => {
  let current = value;
  for (const key of path) current = isObject(current) ? current[key] : undefined;
  return isObject(current) ? current : undefined;
};

/**
 * What FCM refuses beyond the field types: a `webpush.fcm_options.link` that is not https (FCM requires it), and
 * in the APNs payload a `category` that is not a string (APNs reads it as the category identifier).
 */
const semanticProblem = (
  message: Record<string, unknown>,
): { field: string; message: string } | undefined => {
  const link =
    objectAt(message, 'webpush', 'fcm_options')?.link ?? objectAt(message, 'webpush', 'fcmOptions')?.link;
  if (link !== undefined && !/^https:\/\/[^/]/i.test(String(link)))
    return { field: 'message.webpush.fcm_options.link', message: 'HTTPS is required for the link' };
  const category = objectAt(message, 'apns', 'payload', 'aps')?.category;
  if (category !== undefined && typeof category !== 'string')
    return { field: 'message.apns.payload', message: 'Invalid APNs payload: aps.category must be a string' };
  const actions = objectAt(message, 'webpush', 'notification')?.actions;
  if (
    actions !== undefined &&
    (!Array.isArray(actions) ||
      actions.some(
        (action) =>
          !isObject(action) || typeof action.action !== 'string' || typeof action.title !== 'string',
      ))
  )
    return {
      field: 'message.webpush.notification',
      message: 'Invalid webpush notification: actions must be [{action, title}] strings',
    };
  return undefined;
};

const headersOf = (request: HttpRequest): Record<string, string> =>
  Object.fromEntries(
    Object.entries(request.headers)
      .filter((entry): entry is [string, string | string[]] => entry[1] !== undefined)
      .map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value]),
  );

/** Starts the stand-in on 127.0.0.1 on a free port, with a freshly generated service account. */
export const startFcmStandIn = async (options: FcmStandInOptions = {}): Promise<FcmStandIn> => {
  const now = options.now ?? Date.now;
  const projectId = options.projectId ?? 'notify-local';
  const lifetime = options.accessTokenLifetimeSecs ?? 3599;
  const { privateKey, publicKey } = options.privateKey
    ? { privateKey: options.privateKey, publicKey: createPublicKey(options.privateKey) }
    : generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKeyId = randomBytes(20).toString('hex');
  const clientEmail = `firebase-adminsdk-local@${projectId}.iam.gserviceaccount.com`;

  /** Issued access token → when it expires (ms); removed when forced to expire. */
  const accessTokens = new Map<string, number>();
  let issued = 0;
  const dead = new Set<string>();
  const received: ReceivedPush[] = [];
  const answers: FcmAnswer[] = [];
  const faults: FcmFault[] = [];
  const grantFaults: FcmFault[] = [];
  let tokenUri = '';

  const oauthError = (error: string, description: string, status = 400): HttpReply =>
    jsonReply(status, 'application/json; charset=utf-8', { error, error_description: description });

  const grant = async (request: HttpRequest): Promise<HttpReply> => {
    const fault = grantFaults.shift();
    if (fault) {
      const reply = oauthError(
        fault.errorCode ?? 'temporarily_unavailable',
        fault.message ?? '',
        fault.status,
      );
      return withRetryAfter(reply, fault.retryAfter);
    }
    const form = new URLSearchParams(request.body);
    if (form.get('grant_type') !== JWT_BEARER)
      return oauthError('unsupported_grant_type', `Invalid grant_type: ${form.get('grant_type') ?? ''}`);
    const assertion = form.get('assertion') ?? '';
    let kid: string | undefined;
    try {
      kid = decodeProtectedHeader(assertion).kid;
    } catch {
      return oauthError('invalid_request', 'Invalid JWT: the assertion is not a JWT.');
    }
    if (kid !== privateKeyId) return oauthError('invalid_grant', 'Invalid JWT Signature.');
    let claims: Record<string, unknown>;
    try {
      ({ payload: claims } = await jwtVerify(assertion, publicKey, {
        algorithms: ['RS256'],
        currentDate: new Date(now()),
      }));
    } catch (error) {
      const expired = (error as { code?: string }).code === 'ERR_JWT_EXPIRED';
      return oauthError(
        'invalid_grant',
        expired
          ? 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.'
          : 'Invalid JWT Signature.',
      );
    }
    if (claims.iss !== clientEmail) return oauthError('invalid_grant', 'Invalid grant: account not found');
    if (claims.aud !== tokenUri) return oauthError('invalid_grant', 'Invalid JWT: Failed audience check.');
    const iat = Number(claims.iat);
    const exp = Number(claims.exp);
    const nowSecs = now() / 1000;
    if (!Number.isFinite(iat) || !Number.isFinite(exp) || exp - iat > 3600 || iat > nowSecs + CLOCK_SKEW_SECS)
      return oauthError(
        'invalid_grant',
        'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.',
      );
    const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
    if (!scopes.includes(SCOPE))
      return oauthError('invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
    const accessToken = `ya29.local-${randomBytes(24).toString('base64url')}`;
    accessTokens.set(accessToken, now() + lifetime * 1000);
    issued += 1;
    return jsonReply(200, 'application/json; charset=utf-8', {
      access_token: accessToken,
      expires_in: lifetime,
      token_type: 'Bearer',
    });
  };

  const send = (request: HttpRequest, project: string): HttpReply => {
    const bearer = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')?.[1];
    const expiresAt = bearer === undefined ? undefined : accessTokens.get(bearer);
    if (expiresAt === undefined || now() >= expiresAt)
      return googleError(
        401,
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
      );
    if (project !== projectId)
      return googleError(
        403,
        `Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/${project}' (or it may not exist).`,
      );
    const fault = faults.shift();
    if (fault)
      return googleError(fault.status, fault.message ?? STATUS_NAMES[fault.status] ?? 'Error', {
        ...(fault.errorCode === undefined ? {} : { errorCode: fault.errorCode }),
        ...(fault.field === undefined ? {} : { field: fault.field }),
        ...(fault.retryAfter === undefined ? {} : { retryAfter: fault.retryAfter }),
      });
    let body: unknown;
    try {
      body = JSON.parse(request.body);
    } catch {
      return googleError(400, 'Invalid JSON payload received. Unexpected token.');
    }
    if (
      !isObject(body) ||
      !isObject(body.message) ||
      Object.keys(body).some((key) => !/^(message|validate_?[oO]nly)$/.test(key))
    )
      return googleError(400, 'Invalid JSON payload received. Expected {"message": {...}}.');
    const message = body.message;
    try {
      check(message, MESSAGE, 'message');
    } catch (error) {
      if (!(error instanceof InvalidMessage)) throw error;
      return googleError(400, error.message, { field: error.field });
    }
    const beyondTypes = semanticProblem(message);
    if (beyondTypes)
      return googleError(400, beyondTypes.message, {
        errorCode: 'INVALID_ARGUMENT',
        field: beyondTypes.field,
      });
    const targets = ['token', 'topic', 'condition'].filter((field) => message[field] !== undefined);
    if (targets.length !== 1)
      return googleError(400, 'Recipient of the message is not set.', {
        field: 'message',
        errorCode: 'INVALID_ARGUMENT',
      });
    const token = String(message.token ?? '');
    if (targets[0] !== 'token' || !REGISTRATION_TOKEN.test(token))
      return googleError(400, 'The registration token is not a valid FCM registration token', {
        errorCode: 'INVALID_ARGUMENT',
      });
    const reservedKey = Object.keys(isObject(message.data) ? message.data : {}).find((key) =>
      RESERVED_DATA_KEY.test(key),
    );
    if (reservedKey !== undefined)
      return googleError(400, `Invalid data payload key: ${reservedKey}`, { field: 'message.data' });
    const { token: _token, ...measured } = message;
    if (Buffer.byteLength(JSON.stringify(measured)) > SIZE_LIMIT)
      return googleError(400, 'Message is too big', { errorCode: 'INVALID_ARGUMENT', field: 'message' });
    if (dead.has(token))
      return googleError(404, 'Requested entity was not found.', { errorCode: 'UNREGISTERED' });
    // A dry run is checked in full and delivers nothing.
    if (body.validate_only === true || body.validateOnly === true)
      return jsonReply(200, 'application/json; charset=UTF-8', {
        name: `projects/${projectId}/messages/fake_message_id`,
      });
    const data = isObject(message.data) ? message.data : {};
    received.push({
      provider: 'fcm',
      token,
      push_id: typeof data.push_id === 'string' ? data.push_id : null,
      headers: headersOf(request),
      payload: message,
      at: new Date(now()).toISOString(),
    });
    return jsonReply(200, 'application/json; charset=UTF-8', {
      name: `projects/${projectId}/messages/${randomUUID()}`,
    });
  };

  /** The size the limit counts, recorded with every `messages:send` answer. */
  const measuredBytes = (request: HttpRequest): number | null => {
    try {
      const { message } = JSON.parse(request.body) as { message?: Record<string, unknown> };
      if (!isObject(message)) return null;
      const { token: _token, ...measured } = message;
      return Buffer.byteLength(JSON.stringify(measured));
    } catch {
      return null;
    }
  };

  const handle = async (request: HttpRequest): Promise<HttpReply> => {
    if (request.method === 'POST' && request.url.pathname === '/token') return grant(request);
    const sendPath = /^\/v1\/projects\/([^/]+)\/messages:send$/.exec(request.url.pathname);
    if (request.method === 'POST' && sendPath) {
      const reply = send(request, decodeURIComponent(sendPath[1] as string));
      const errorCode =
        reply.status === 200 ? null : (/"errorCode":"([A-Z_]+)"/.exec(reply.body)?.[1] ?? null);
      answers.push({ status: reply.status, errorCode, messageBytes: measuredBytes(request) });
      return reply;
    }
    return googleError(404, `The requested URL ${request.url.pathname} was not found on this server.`);
  };

  const server = await startLoopbackServer('FcmStandIn', handle, (error) =>
    googleError(error.status, error.message),
  );
  tokenUri = `${server.endpoint}/token`;
  const credentials: FcmServiceAccount = {
    type: 'service_account',
    project_id: projectId,
    private_key_id: privateKeyId,
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    client_email: clientEmail,
    client_id: String(BigInt(`0x${randomBytes(8).toString('hex')}`)),
    auth_uri: `${server.endpoint}/auth`,
    token_uri: tokenUri,
  };

  return {
    provider: 'fcm',
    url: server.endpoint,
    credentials,
    keys: { privateKey, publicKey },
    received: () => [...received],
    markDead: (token) => {
      dead.add(token);
    },
    tokensIssued: () => issued,
    answers: () => [...answers],
    expireAccessTokens: () => accessTokens.clear(),
    failNext: (count, fault, endpoint = 'messages:send') => {
      for (let index = 0; index < count; index += 1)
        (endpoint === 'token' ? grantFaults : faults).push(fault);
    },
    close: () => server.close(),
  };
};
