import {
  createCipheriv,
  createECDH,
  createHash,
  createPrivateKey,
  type ECDH,
  generateKeyPairSync,
  hkdfSync,
  type KeyObject,
  randomBytes,
} from 'node:crypto';
import { SignJWT } from 'jose';
import { retryAfterSecs } from '../../core/retry-after';
import { AddressRefused } from '../webhooks/address-policy';
import { postPinned, type SendResult } from '../webhooks/sender';
import { webhookSettings } from '../webhooks/settings';
import { checkWebhookUrl } from '../webhooks/url-policy';
import { fitPayload, type PushContent, type PushOutcome, type PushSender, type PushTarget } from './provider';

/*
 * Standard Web Push (docs/push.md "Web Push"): RFC 8030 (the push message and its headers), RFC 8291 (`aes128gcm`
 * payload encryption to the subscription's keys) and RFC 8292 (VAPID: who is sending). A subscription's endpoint is
 * a URL the user supplied: it passes the webhook address policy and the request goes to the very address checked.
 */

/** The secret's JSON: the VAPID key pair (base64url, raw P-256, as web-push's generateVAPIDKeys gives) and a contact. */
export interface WebPushCredentials {
  /** The uncompressed public point, 65 bytes: what browsers get as `applicationServerKey`. */
  readonly public_key: string;
  /** The private scalar, 32 bytes. */
  readonly private_key: string;
  /** `mailto:` address or `https:` URL the push service may contact about our traffic. */
  readonly subject: string;
}

export interface WebPushOptions {
  /**
   * `http://` and loopback endpoints allowed (local mode, for the stand-in), as for webhooks; default: the webhook
   * setting, so both follow one switch.
   */
  readonly allowLoopback?: boolean;
  /** How long one request may take before it counts as a network failure (retried). */
  readonly timeoutMs?: number;
  /** The clock (tests): JWT `exp`, TTL. */
  readonly now?: () => Date;
}

/** TTL when the notification has no `expires_at`: 28 days, the longest the large push services keep a message. */
export const DEFAULT_TTL_SECS = 28 * 24 * 3600;
/** The body a push service must accept (RFC 8030 §7.2): header, ciphertext and tag together. */
const MAX_BODY_BYTES = 4096;
/** RFC 8291 §4: salt 16, record size 4, key id length 1, key id 65. */
const HEADER_BYTES = 86;
const TAG_BYTES = 16;
/** Plaintext that fits one record of a 4,096-byte body: 4096 − 86 − 16 − 1 (the 0x02 delimiter) = 3,993. */
export const MAX_PLAINTEXT_BYTES = MAX_BODY_BYTES - HEADER_BYTES - TAG_BYTES - 1;
/** RFC 8188 record size: the message is one record, at most 4,010 bytes, so 4096 (the RFC's example) holds it. */
const RECORD_SIZE = 4096;
/** VAPID tokens live 12 hours (RFC 8292 allows at most 24) and are signed anew when less than one hour is left. */
const VAPID_TOKEN_SECS = 12 * 3600;
const VAPID_RENEW_BEFORE_SECS = 3600;
/** Push service origins whose token is kept; endpoints are few origins in practice, but a user picks them. */
const VAPID_CACHE_ENTRIES = 64;
const DEFAULT_TIMEOUT_MS = 10_000;

export class WebPushCredentialsError extends Error {
  override name = 'WebPushCredentialsError';
}

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

/** Strict base64url of exactly `length` bytes (the `=` padding some tools add is accepted), else undefined. */
const bytesOf = (text: unknown, length: number): Buffer | undefined => {
  if (typeof text !== 'string' || !BASE64URL.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.length === length ? bytes : undefined;
};

const isSubject = (subject: string): boolean => {
  if (/^mailto:[^\s@]+@[^\s@]+$/.test(subject)) return true;
  try {
    const url = new URL(subject);
    return url.protocol === 'https:' && url.hostname !== '' && !/\s/.test(subject);
  } catch {
    return false;
  }
};

interface VapidKey {
  readonly publicKey: string;
  readonly signingKey: KeyObject;
  readonly subject: string;
}

/**
 * Checks the secret's JSON and loads the signing key. Throws with the field named: the public key must be the
 * private key's own 65-byte uncompressed point, since push services check the token with the public key the
 * browser subscribed with.
 */
const loadVapidKey = (value: unknown): VapidKey => {
  const fail: (message: string) => never = (message) => {
    throw new WebPushCredentialsError(`webpush credentials: ${message}`);
  };
  if (typeof value !== 'object' || value === null)
    return fail('expected an object {public_key, private_key, subject}');
  const { public_key, private_key, subject } = value as Record<string, unknown>;
  const publicKey = bytesOf(public_key, 65);
  if (publicKey?.[0] !== 0x04) {
    return fail('public_key must be a base64url P-256 public key: 65 bytes, uncompressed (0x04, x, y)');
  }
  const privateKey = bytesOf(private_key, 32);
  if (!privateKey) return fail('private_key must be a base64url P-256 private key: 32 bytes');
  if (typeof subject !== 'string' || !isSubject(subject)) {
    return fail('subject must be a mailto: address or an https: URL (how the push service reaches you)');
  }
  const ecdh = createECDH('prime256v1');
  try {
    ecdh.setPrivateKey(privateKey);
  } catch {
    fail('private_key is not a valid P-256 private key');
  }
  const derived = ecdh.getPublicKey();
  if (!derived.equals(publicKey)) fail('public_key is not the public key of private_key');
  const signingKey = createPrivateKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      d: privateKey.toString('base64url'),
      x: derived.subarray(1, 33).toString('base64url'),
      y: derived.subarray(33, 65).toString('base64url'),
    },
    format: 'jwk',
  });
  return { publicKey: derived.toString('base64url'), signingKey, subject };
};

/** The secret's JSON checked (see `loadVapidKey`); throws an error naming the field. */
export const parseWebPushCredentials = (value: unknown): WebPushCredentials => {
  loadVapidKey(value);
  const { public_key, private_key, subject } = value as WebPushCredentials;
  return { public_key, private_key, subject };
};

/** A new VAPID key pair with `subject`, in the secret's shape (`npm run vapid-keys`). */
export const generateVapidCredentials = (subject: string): WebPushCredentials => {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' });
  const credentials = {
    public_key: Buffer.concat([
      Buffer.from([0x04]),
      Buffer.from(jwk.x as string, 'base64url'),
      Buffer.from(jwk.y as string, 'base64url'),
    ]).toString('base64url'),
    private_key: jwk.d as string,
    subject,
  };
  loadVapidKey(credentials); // the subject is checked like any secret's
  return credentials;
};

/**
 * RFC 8291 `aes128gcm`: the body for one push, a single record of `plaintext` followed by the last-record delimiter
 * 0x02, no padding. `sender` (a fresh P-256 key) and `salt` (16 random bytes) are new for every message; tests pass
 * the RFC's fixed ones.
 */
export const encryptPushPayload = (
  plaintext: Uint8Array,
  keys: { readonly p256dh: Buffer; readonly auth: Buffer },
  sender: ECDH = fresh(),
  salt: Buffer = randomBytes(16),
): Buffer => {
  const senderPublic = sender.getPublicKey();
  const sharedSecret = sender.computeSecret(keys.p256dh);
  // §3.3: IKM from the ECDH secret and the auth secret, bound to both public keys.
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), keys.p256dh, senderPublic]);
  const ikm = Buffer.from(hkdfSync('sha256', sharedSecret, keys.auth, keyInfo, 32));
  // RFC 8188 §2.2–2.3: content-encryption key and nonce from the salt.
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
  const cipher = createCipheriv('aes-128-gcm', cek, nonce); // record 0: the nonce as derived
  const ciphertext = Buffer.concat([
    cipher.update(plaintext),
    cipher.update(Buffer.from([0x02])),
    cipher.final(),
  ]);
  const header = Buffer.alloc(21);
  salt.copy(header, 0);
  header.writeUInt32BE(RECORD_SIZE, 16);
  header.writeUInt8(senderPublic.length, 20);
  return Buffer.concat([header, senderPublic, ciphertext, cipher.getAuthTag()]);
};

const fresh = (): ECDH => {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return ecdh;
};

/**
 * The JSON the service worker reads (docs/push.md shows one): what the notification shows, what it carries, and the
 * ids that tie the push to the notification. `silent`: show nothing of your own; `tag` (the collapse key) lets a
 * later notification replace an earlier one; `badge` is the unread count when known.
 */
const encodePayload = (content: PushContent): string =>
  JSON.stringify({
    notification_id: content.notification_id,
    push_id: content.push_id,
    event_type: content.event_type,
    title: content.title,
    body: content.body,
    data: content.data,
    receiver_id: content.receiver_id,
    url: content.url,
    // As the Notification API takes them (`showNotification(title, {actions})`); `url`: a link button's.
    actions: content.actions.map((action) => ({ action: action.id, title: action.label, url: action.url })),
    priority: content.priority,
    silent: content.silent,
    ...(content.collapse_key !== null ? { tag: content.collapse_key } : {}),
    ...(content.badge !== null ? { badge: content.badge } : {}),
  });

/** RFC 8030 §5.3: `high` and `urgent` wake the device now; `low` may wait for power and network. */
const URGENCY: Record<PushContent['priority'], string> = {
  low: 'low',
  normal: 'normal',
  high: 'high',
  urgent: 'high',
};

/** RFC 8030 §5.4: a topic is at most 32 characters of the base64url alphabet. */
const TOPIC = /^[A-Za-z0-9_-]{1,32}$/;

/**
 * The `Topic` for a collapse key: the key itself when it is a valid topic, else the first 32 characters of the
 * base64url SHA-256 of it (same key, same topic; 192 bits leave no practical collisions).
 */
export const topicFor = (collapseKey: string): string =>
  TOPIC.test(collapseKey)
    ? collapseKey
    : createHash('sha256').update(collapseKey).digest('base64url').slice(0, 32);

/** TTL in seconds: until `expires_at` (rounded down), or the default; null when the push is already worthless. */
const ttlSecs = (expiresAt: string | null, now: Date): number | null => {
  if (expiresAt === null) return DEFAULT_TTL_SECS;
  const secs = Math.floor((Date.parse(expiresAt) - now.getTime()) / 1000);
  return secs > 0 ? Math.min(secs, DEFAULT_TTL_SECS) : null;
};

/** A subscription's keys as RFC 8291 needs them, or why they are unusable. */
const subscriptionKeys = (target: PushTarget): { p256dh: Buffer; auth: Buffer } | string => {
  if (!target.web_keys) return 'the subscription has no keys (p256dh, auth)';
  const p256dh = bytesOf(target.web_keys.p256dh, 65);
  if (p256dh?.[0] !== 0x04) return 'the subscription key p256dh is not a 65-byte uncompressed P-256 point';
  const auth = bytesOf(target.web_keys.auth, 16);
  if (!auth) return 'the subscription auth secret is not 16 bytes';
  return { p256dh, auth };
};

/** RFC 8030 and the push services' answers, as the pipeline acts on them (docs/push.md "Web Push"). */
const classify = (result: SendResult, now: Date): PushOutcome => {
  const { status } = result;
  if (status === undefined) return { kind: 'retry', reason: `network: ${result.error ?? 'no answer'}` };
  if (status === 200 || status === 201 || status === 202) {
    return { kind: 'delivered', provider_id: result.location ?? null };
  }
  if (status === 404 || status === 410) return { kind: 'gone', reason: `push service answered ${status}` };
  if (status === 401 || status === 403) {
    return { kind: 'credentials', reason: `push service refused the VAPID token (${status})` };
  }
  if (status === 429 || status >= 500) {
    const retryAfter = retryAfterSecs(result.retryAfter, now);
    return {
      kind: 'retry',
      reason: `push service answered ${status}`,
      ...(retryAfter !== undefined ? { retry_after_secs: retryAfter } : {}),
    };
  }
  return { kind: 'rejected', reason: `push service answered ${status}` };
};

/** One VAPID key's sender: tokens are signed once per push service origin and kept until shortly before expiry. */
export const createWebPushSender = (
  credentials: WebPushCredentials,
  options: WebPushOptions = {},
): PushSender => {
  const vapid = loadVapidKey(credentials);
  const now = options.now ?? (() => new Date());
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const tokens = new Map<string, { readonly token: string; readonly exp: number }>();

  const vapidToken = async (audience: string): Promise<string> => {
    const nowSecs = Math.floor(now().getTime() / 1000);
    const kept = tokens.get(audience);
    if (kept && kept.exp - nowSecs > VAPID_RENEW_BEFORE_SECS) return kept.token;
    const exp = nowSecs + VAPID_TOKEN_SECS;
    const token = await new SignJWT({ aud: audience, exp, sub: vapid.subject })
      .setProtectedHeader({ typ: 'JWT', alg: 'ES256' })
      .sign(vapid.signingKey);
    tokens.delete(audience);
    if (tokens.size >= VAPID_CACHE_ENTRIES) tokens.delete(tokens.keys().next().value as string);
    tokens.set(audience, { token, exp });
    return token;
  };

  return {
    async send(target, content) {
      const keys = subscriptionKeys(target);
      if (typeof keys === 'string') return { kind: 'rejected', reason: keys };
      const sentAt = now();
      const ttl = ttlSecs(content.expires_at, sentAt);
      if (ttl === null) return { kind: 'rejected', reason: 'expired before it was sent' };
      const fitted = fitPayload(content, encodePayload, MAX_PLAINTEXT_BYTES);
      if (!fitted)
        return { kind: 'rejected', reason: `payload over ${MAX_PLAINTEXT_BYTES} bytes even shrunk` };
      let endpoint: Awaited<ReturnType<typeof checkWebhookUrl>>;
      try {
        endpoint = await checkWebhookUrl(
          target.token,
          options.allowLoopback ?? webhookSettings().allowLoopback,
        );
      } catch (error) {
        if (!(error instanceof AddressRefused)) throw error;
        const reason = `endpoint refused: ${error.message}`;
        return error.unresolved ? { kind: 'retry', reason } : { kind: 'rejected', reason };
      }
      let body: Buffer;
      try {
        body = encryptPushPayload(Buffer.from(fitted.payload, 'utf8'), keys);
      } catch {
        // computeSecret refuses a point that is not on the curve.
        return { kind: 'rejected', reason: 'the subscription key p256dh is not a point on P-256' };
      }
      const token = await vapidToken(endpoint.url.origin);
      const headers: Record<string, string> = {
        authorization: `vapid t=${token}, k=${vapid.publicKey}`,
        'content-type': 'application/octet-stream',
        'content-encoding': 'aes128gcm',
        ttl: String(ttl),
        urgency: URGENCY[content.priority],
        ...(content.collapse_key !== null ? { topic: topicFor(content.collapse_key) } : {}),
      };
      const result = await postPinned(endpoint.url, endpoint.resolved, headers, body, timeoutMs);
      return classify(result, now());
    },
  };
};
