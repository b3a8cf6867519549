// @peculiar/x509 needs the Reflect metadata API before it loads.
import 'reflect-metadata';
import { createPublicKey, generateKeyPairSync, randomUUID, webcrypto } from 'node:crypto';
import {
  createSecureServer,
  type Http2Session,
  constants as http2Constants,
  type IncomingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as x509 from '@peculiar/x509';
import { decodeProtectedHeader, importSPKI, jwtVerify } from 'jose';
import type { ApnsCredentials } from '../../lambdas/domain/push/apns';
import type { PushStandIn, ReceivedPush } from './stand-in';

/*
 * A local APNs (the provider API over HTTP/2 + TLS) for `npm start` and the tests: it generates an APNs key for
 * the app and a CA whose certificate the sender trusts, checks every request as APNs documents it (provider
 * token, headers, device token, payload size) and answers with APNs's status codes and reasons. Pushes it
 * accepts are kept for `received()`; `markDead` makes a token answer 410 Unregistered from then on.
 */

/**
 * What the next request that passes the checks meets instead of delivery: an APNs error answer, a GOAWAY that
 * refuses it (as when APNs shuts a connection down), or silence (a connection that died without a word).
 */
export type ApnsFault =
  | { readonly status: number; readonly reason: string; readonly retry_after?: string }
  | 'goaway'
  | 'silence';

export interface ApnsStandIn extends PushStandIn {
  /** The app's APNs key, generated at start, as its secret's JSON holds it. */
  readonly credentials: ApnsCredentials;
  /** The PEM of the CA that signed the stand-in's certificate: the sender's `ca`. */
  readonly ca: string;
  /** HTTP/2 sessions (connections) accepted so far. */
  sessions(): number;
  /** Queues answers for the next requests, one each, in order. */
  failNext(...faults: readonly ApnsFault[]): void;
}

export interface ApnsStandInOptions {
  /** The app's key to accept (e.g. one shared by a production and a sandbox stand-in); default: a new one. */
  readonly credentials?: ApnsCredentials;
  readonly bundleId?: string;
  /** Milliseconds since the epoch: a provider token's age and the 410 timestamps are read from it. */
  readonly now?: () => number;
}

/** APNs refuses a provider token issued more than an hour ago. */
const PROVIDER_TOKEN_MAX_AGE_SECS = 3600;
const PAYLOAD_MAX_BYTES = 4096;
/** Streams a connection may carry at once after its first valid provider token (APNs promises no number). */
const CONCURRENT_STREAMS = 100;
const COLLAPSE_ID_MAX_BYTES = 64;
const DEVICE_PATH = /^\/3\/device\/([^/?]*)$/;
const DEVICE_TOKEN = /^[0-9a-fA-F]{64,200}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PUSH_TYPES = new Set([
  'alert',
  'background',
  'location',
  'voip',
  'complication',
  'fileprovider',
  'mdm',
  'liveactivity',
  'pushtotalk',
  'widgets',
  'controls',
]);

interface Refusal {
  readonly status: number;
  readonly reason: string;
}

const refuse = (status: number, reason: string): Refusal => ({ status, reason });

export const startApnsStandIn = async (options: ApnsStandInOptions = {}): Promise<ApnsStandIn> => {
  const clock = options.now ?? Date.now;
  const credentials = options.credentials ?? generateCredentials(options.bundleId ?? 'dev.notify.local');
  const verificationKey = await importSPKI(publicPemOf(credentials.private_key), 'ES256');
  const tls = await generateTls();

  const received: ReceivedPush[] = [];
  const dead = new Map<string, number>();
  const faults: ApnsFault[] = [];
  const open = new Set<ServerHttp2Session>();
  const trusted = new WeakSet<Http2Session>();
  let sessionCount = 0;

  const checkProviderToken = async (authorization: string | undefined): Promise<Refusal | null> => {
    if (!authorization) return refuse(403, 'MissingProviderToken');
    const match = /^bearer (\S+)$/i.exec(authorization);
    if (!match?.[1]) return refuse(403, 'InvalidProviderToken');
    const jwt = match[1];
    try {
      if (decodeProtectedHeader(jwt).kid !== credentials.key_id) return refuse(403, 'InvalidProviderToken');
      const { payload } = await jwtVerify(jwt, verificationKey, {
        algorithms: ['ES256'],
        issuer: credentials.team_id,
        requiredClaims: ['iat'],
        currentDate: new Date(clock()),
      });
      const ageSecs = clock() / 1000 - (payload.iat as number);
      if (ageSecs > PROVIDER_TOKEN_MAX_AGE_SECS) return refuse(403, 'ExpiredProviderToken');
      return null;
    } catch {
      return refuse(403, 'InvalidProviderToken');
    }
  };

  const checkHeaders = (headers: IncomingHttpHeaders): Refusal | null => {
    const topic = text(headers['apns-topic']);
    if (!topic) return refuse(400, 'MissingTopic');
    if (topic !== credentials.bundle_id) return refuse(400, 'TopicDisallowed');
    const pushType = text(headers['apns-push-type']);
    if (!pushType || !PUSH_TYPES.has(pushType)) return refuse(400, 'InvalidPushType');
    const priority = text(headers['apns-priority']);
    if (priority !== undefined && !['1', '5', '10'].includes(priority)) return refuse(400, 'BadPriority');
    // Apple: background pushes are sent with priority 5 (10 is an error for them).
    if (pushType === 'background' && priority !== '5') return refuse(400, 'BadPriority');
    const apnsId = text(headers['apns-id']);
    if (apnsId !== undefined && !UUID.test(apnsId)) return refuse(400, 'BadMessageId');
    const expiration = text(headers['apns-expiration']);
    if (expiration !== undefined && !/^\d+$/.test(expiration)) return refuse(400, 'BadExpirationDate');
    const collapseId = text(headers['apns-collapse-id']);
    if (collapseId !== undefined && Buffer.byteLength(collapseId) > COLLAPSE_ID_MAX_BYTES) {
      return refuse(400, 'BadCollapseId');
    }
    return null;
  };

  const checkPayload = (body: Buffer): Refusal | { readonly payload: unknown } => {
    if (body.length === 0) return refuse(400, 'PayloadEmpty');
    if (body.length > PAYLOAD_MAX_BYTES) return refuse(413, 'PayloadTooLarge');
    let payload: unknown;
    try {
      payload = JSON.parse(body.toString('utf8'));
    } catch {
      // APNs documents no reason for a body that is no JSON; this one is the stand-in's own.
      return refuse(400, 'BadPayload');
    }
    const aps = (payload as { aps?: unknown } | null)?.aps;
    if (typeof aps !== 'object' || aps === null || Array.isArray(aps)) return refuse(400, 'BadPayload');
    // The category identifier of the buttons (a registered UNNotificationCategory) is a string.
    const category = (aps as { category?: unknown }).category;
    if (category !== undefined && typeof category !== 'string') return refuse(400, 'BadPayload');
    return { payload };
  };

  const handle = async (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, body: Buffer) => {
    const apnsId = text(headers['apns-id']) ?? randomUUID();
    const answer = (status: number, error?: Record<string, unknown>, extra: Record<string, string> = {}) => {
      if (stream.destroyed) return;
      stream.respond({
        ':status': status,
        'apns-id': apnsId,
        ...(error ? { 'content-type': 'application/json' } : {}),
        ...extra,
      });
      stream.end(error ? JSON.stringify(error) : undefined);
    };
    if (headers[':method'] !== 'POST') return answer(405, { reason: 'MethodNotAllowed' });
    const path = DEVICE_PATH.exec(text(headers[':path']) ?? '');
    if (!path) return answer(404, { reason: 'BadPath' });
    const token = path[1] ?? '';
    const refusal =
      (await checkProviderToken(text(headers.authorization))) ??
      checkHeaders(headers) ??
      (token === '' ? refuse(400, 'MissingDeviceToken') : null) ??
      (DEVICE_TOKEN.test(token) ? null : refuse(400, 'BadDeviceToken'));
    if (refusal) return answer(refusal.status, { reason: refusal.reason });
    if (stream.session && !trusted.has(stream.session)) {
      trusted.add(stream.session);
      stream.session.settings({ maxConcurrentStreams: CONCURRENT_STREAMS });
    }
    const checked = checkPayload(body);
    if ('reason' in checked) return answer(checked.status, { reason: checked.reason });
    const fault = faults.shift();
    if (fault === 'silence') return;
    if (fault === 'goaway') {
      // As APNs does when it shuts a connection down: this stream is not processed, the client reconnects.
      stream.session?.goaway(
        http2Constants.NGHTTP2_NO_ERROR,
        Math.max(0, (stream.id ?? 2) - 2),
        Buffer.from(JSON.stringify({ reason: 'Shutdown' })),
      );
      stream.close(http2Constants.NGHTTP2_REFUSED_STREAM);
      stream.session?.close();
      return;
    }
    if (fault) {
      return answer(
        fault.status,
        { reason: fault.reason },
        fault.retry_after === undefined ? {} : { 'retry-after': fault.retry_after },
      );
    }
    const deadSince = dead.get(token.toLowerCase());
    if (deadSince !== undefined) return answer(410, { reason: 'Unregistered', timestamp: deadSince });
    const recorded: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      if (!name.startsWith(':') && value !== undefined) recorded[name] = String(value);
    }
    received.push({
      provider: 'apns',
      token,
      push_id: text(headers['apns-id']) ?? null,
      headers: recorded,
      payload: checked.payload,
      at: new Date(clock()).toISOString(),
    });
    return answer(200);
  };

  // As APNs: one stream at a time on a new connection until a request carries a valid provider token.
  const server = createSecureServer({
    key: tls.key,
    cert: tls.cert,
    allowHTTP1: false,
    settings: { maxConcurrentStreams: 1 },
  });
  server.on('session', (session) => {
    sessionCount += 1;
    open.add(session);
    session.on('close', () => open.delete(session));
    session.on('error', () => open.delete(session));
  });
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    let length = 0;
    stream.on('data', (chunk: Buffer) => {
      length += chunk.length;
      // Past the limit only the length matters (the answer is 413).
      if (length <= PAYLOAD_MAX_BYTES + 1) chunks.push(chunk);
    });
    stream.on('error', () => {});
    stream.on('end', () => {
      const body = length > PAYLOAD_MAX_BYTES ? Buffer.alloc(PAYLOAD_MAX_BYTES + 1) : Buffer.concat(chunks);
      void handle(stream, headers, body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    provider: 'apns',
    url,
    credentials,
    ca: tls.caCert,
    received: () => [...received],
    markDead: (token) => {
      dead.set(token.toLowerCase(), clock());
    },
    sessions: () => sessionCount,
    failNext: (...next) => {
      faults.push(...next);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const session of open) session.destroy();
        server.close(() => resolve());
      }),
  };
};

const text = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

const randomId = (length: number): string =>
  Array.from(webcrypto.getRandomValues(new Uint8Array(length)), (byte) => ALPHANUMERIC[byte % 36]).join('');

/** A .p8-like key (PKCS#8 PEM, P-256) with a key id and team id of Apple's form. */
const generateCredentials = (bundle_id: string): ApnsCredentials => {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    key_id: randomId(10),
    team_id: randomId(10),
    bundle_id,
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
};

const publicPemOf = (privatePem: string): string =>
  createPublicKey(privatePem).export({ type: 'spki', format: 'pem' }).toString();

// Node's WebCrypto types, as the library's (DOM) types name them.
type SelfSignedParams = Parameters<typeof x509.X509CertificateGenerator.createSelfSigned>[0];
type SignedParams = x509.X509CertificateCreateWithKeyParams;

const ECDSA = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A CA made for this run, and a certificate it signed for 127.0.0.1 and localhost. */
const generateTls = async (): Promise<{ caCert: string; cert: string; key: string }> => {
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const subtle = webcrypto.subtle;
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(Date.now() + 30 * 24 * 3600_000);
  const caKeys = (await subtle.generateKey(ECDSA, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: 'CN=Notify local APNs CA',
    notBefore,
    notAfter,
    keys: caKeys as unknown as SelfSignedParams['keys'],
    signingAlgorithm: ECDSA,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
    ],
  });
  const serverKeys = (await subtle.generateKey(ECDSA, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: 'CN=127.0.0.1',
    issuer: ca.subject,
    notBefore,
    notAfter,
    publicKey: serverKeys.publicKey as unknown as SignedParams['publicKey'],
    signingKey: caKeys.privateKey as unknown as SignedParams['signingKey'],
    signingAlgorithm: ECDSA,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        { type: 'ip', value: '127.0.0.1' },
        { type: 'dns', value: 'localhost' },
      ]),
    ],
  });
  const pkcs8 = Buffer.from(await subtle.exportKey('pkcs8', serverKeys.privateKey)).toString('base64');
  const key = `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)?.join('\n')}\n-----END PRIVATE KEY-----\n`;
  return { caCert: ca.toString('pem'), cert: cert.toString('pem'), key };
};

const randomSerial = (): string => {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] ?? 0) & 0x7f; // positive
  return Buffer.from(bytes).toString('hex');
};
