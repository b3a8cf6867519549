import { createECDH, type ECDH, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decrypt } from 'http_ece';
import { decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { generateVapidCredentials, type WebPushCredentials } from '../../lambdas/domain/push/webpush';
import { type PushStandIn, type ReceivedPush, readBody } from './stand-in';

/*
 * A Web Push service and the browsers subscribed to it, in one local server. `subscribe` does what a browser's
 * `pushManager.subscribe({applicationServerKey})` does (a P-256 key pair and a 16-byte auth secret of the user
 * agent, an endpoint on this service); a POST to an endpoint is checked as push services check it (RFC 8030 headers,
 * RFC 8292 VAPID, the 4,096-byte limit) and decrypted with `http_ece`, an RFC 8188/8291 implementation we did not
 * write, so what `received()` shows is what the service worker would have read.
 */

/** What `PushSubscription.toJSON()` gives a page, and what it registers with Notify. */
export interface WebPushSubscriptionJson {
  readonly endpoint: string;
  readonly keys: { readonly p256dh: string; readonly auth: string };
}

/** An answer the stand-in gives instead of its own, for tests of the sender's classification. */
export interface WebPushFault {
  readonly status: number;
  readonly retryAfter?: string;
}

export interface WebPushStandIn extends PushStandIn {
  /** A VAPID key pair generated at start, for an application server that has none of its own (local mode). */
  readonly credentials: WebPushCredentials;
  /** A browser subscribing with this VAPID public key (base64url): its PushSubscription JSON. */
  subscribe(applicationServerKey: string): WebPushSubscriptionJson;
  /** The next `times` pushes to a live endpoint get this answer, before any check. */
  failNext(fault: WebPushFault, times?: number): void;
}

interface Subscription {
  readonly endpoint: string;
  readonly applicationServerKey: Buffer;
  readonly userAgentKey: ECDH;
  readonly auth: Buffer;
  dead: boolean;
}

/** RFC 8030 §7.2: the payload size a push service must accept (the encrypted body, header included). */
const MAX_BODY_BYTES = 4096;
/** RFC 8292 §2: a token valid for more than 24 hours is refused. */
const MAX_TOKEN_SECS = 24 * 3600;
const URGENCIES = new Set(['very-low', 'low', 'normal', 'high']);
const TOPIC = /^[A-Za-z0-9_-]{1,32}$/;
const ENDPOINT_PATH = '/wpush/';
const SUBSCRIBE_PATH = '/subscriptions';
/** Bodies larger than this are not read to the end (the answer is 413 anyway). */
const READ_LIMIT = 64 * 1024;

/** `vapid t=<jwt>, k=<key>` (RFC 8292 §3) as its two parameters. */
const vapidParams = (authorization: string | undefined): { t?: string; k?: string } => {
  const match = /^vapid\s+(.*)$/i.exec(authorization ?? '');
  if (!match?.[1]) return {};
  const params: Record<string, string> = {};
  for (const part of match[1].split(',')) {
    const [name, ...value] = part.trim().split('=');
    if (name) params[name.toLowerCase()] = value.join('=');
  }
  return { t: params.t, k: params.k };
};

const publicPoint = (text: string | undefined): Buffer | undefined => {
  if (!text || !/^[A-Za-z0-9_-]+={0,2}$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.length === 65 && bytes[0] === 0x04 ? bytes : undefined;
};

/** Starts the service on 127.0.0.1 (`port` 0: a free one). */
export const startWebPushStandIn = async (
  options: { readonly port?: number } = {},
): Promise<WebPushStandIn> => {
  const subscriptions = new Map<string, Subscription>();
  const received: ReceivedPush[] = [];
  const faults: WebPushFault[] = [];
  let origin = '';

  const answer = (
    res: ServerResponse,
    status: number,
    reason: string,
    headers: Record<string, string> = {},
  ) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify({ code: status, reason }));
  };

  /** RFC 8292 §4.2: the token must be signed by `k`, for this origin, expiring within 24 hours, with a contact. */
  const vapidProblem = async (
    subscription: Subscription,
    authorization: string | undefined,
  ): Promise<{ status: number; reason: string } | undefined> => {
    const { t, k } = vapidParams(authorization);
    if (!t || !k) return { status: 401, reason: 'missing VAPID authorization (vapid t=…, k=…)' };
    const key = publicPoint(k);
    if (!key) return { status: 401, reason: 'k is not a P-256 public key' };
    // What FCM answers when the key differs from the one the browser subscribed with.
    if (!key.equals(subscription.applicationServerKey)) {
      return { status: 403, reason: 'VAPID key does not match the subscription' };
    }
    try {
      if (decodeProtectedHeader(t).alg !== 'ES256')
        return { status: 401, reason: 'VAPID token must be ES256' };
      const publicKey = await importJWK(
        {
          kty: 'EC',
          crv: 'P-256',
          x: key.subarray(1, 33).toString('base64url'),
          y: key.subarray(33, 65).toString('base64url'),
        },
        'ES256',
      );
      const { payload } = await jwtVerify(t, publicKey, {
        algorithms: ['ES256'],
        audience: origin,
        requiredClaims: ['exp', 'sub'],
      });
      if ((payload.exp as number) - Date.now() / 1000 > MAX_TOKEN_SECS) {
        return { status: 401, reason: 'VAPID token expires more than 24 hours ahead' };
      }
      if (typeof payload.sub !== 'string' || !/^(mailto|https):/.test(payload.sub)) {
        return { status: 401, reason: 'VAPID sub must be a mailto: or https: URL' };
      }
    } catch (error) {
      return { status: 401, reason: `VAPID token refused: ${(error as Error).message}` };
    }
    return undefined;
  };

  const subscribe = (applicationServerKey: string): WebPushSubscriptionJson => {
    const key = publicPoint(applicationServerKey);
    if (!key)
      throw new Error('applicationServerKey must be a base64url 65-byte uncompressed P-256 public key');
    const userAgentKey = createECDH('prime256v1');
    userAgentKey.generateKeys();
    const auth = randomBytes(16);
    const endpoint = `${origin}${ENDPOINT_PATH}${randomBytes(24).toString('base64url')}`;
    subscriptions.set(endpoint, { endpoint, applicationServerKey: key, userAgentKey, auth, dead: false });
    return {
      endpoint,
      keys: { p256dh: userAgentKey.getPublicKey().toString('base64url'), auth: auth.toString('base64url') },
    };
  };

  /**
   * `POST /subscriptions {"applicationServerKey"}`: `subscribe` over HTTP, for a page or another process (a browser
   * cannot subscribe to this service itself: its push manager talks to its vendor's service). Open to any origin.
   */
  const handleSubscribe = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const cors = {
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'POST',
      'access-control-allow-headers': 'content-type',
    };
    const body = await readBody(req, READ_LIMIT);
    if (req.method === 'OPTIONS') {
      res.writeHead(204, cors).end();
      return;
    }
    let subscription: WebPushSubscriptionJson;
    try {
      const { applicationServerKey } = JSON.parse(body?.toString('utf8') ?? '') as {
        applicationServerKey: string;
      };
      subscription = subscribe(applicationServerKey);
    } catch {
      return answer(res, 400, 'expected {"applicationServerKey": base64url P-256 public key}', cors);
    }
    res.writeHead(201, { 'content-type': 'application/json', ...cors });
    res.end(JSON.stringify(subscription));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.url === SUBSCRIBE_PATH && (req.method === 'POST' || req.method === 'OPTIONS')) {
      return handleSubscribe(req, res);
    }
    const endpoint = `${origin}${req.url ?? ''}`;
    const subscription = subscriptions.get(endpoint);
    if (req.method !== 'POST' || !subscription) {
      await readBody(req, READ_LIMIT);
      return answer(res, 404, 'no such subscription');
    }
    const body = await readBody(req, READ_LIMIT);
    if (subscription.dead) return answer(res, 410, 'subscription expired or unsubscribed');
    const fault = faults.shift();
    if (fault) {
      return answer(
        res,
        fault.status,
        'fault injected',
        fault.retryAfter ? { 'retry-after': fault.retryAfter } : {},
      );
    }
    const problem = await vapidProblem(subscription, req.headers.authorization);
    if (problem) return answer(res, problem.status, problem.reason);
    const [ttl, urgency, topic] = (['ttl', 'urgency', 'topic'] as const).map((name) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value.join(',') : value;
    });
    if (typeof ttl !== 'string' || !/^\d+$/.test(ttl))
      return answer(res, 400, 'TTL header missing or not a number');
    if (urgency !== undefined && !URGENCIES.has(urgency)) return answer(res, 400, `bad Urgency "${urgency}"`);
    if (topic !== undefined && !TOPIC.test(topic)) return answer(res, 400, `bad Topic "${topic}"`);
    if (req.headers['content-encoding'] !== 'aes128gcm')
      return answer(res, 415, 'Content-Encoding must be aes128gcm');
    if (body === null || body.length > MAX_BODY_BYTES) return answer(res, 413, 'payload over 4096 bytes');
    let plaintext: Buffer;
    try {
      plaintext = decrypt(body, {
        version: 'aes128gcm',
        privateKey: subscription.userAgentKey,
        authSecret: subscription.auth,
      });
    } catch (error) {
      return answer(res, 400, `payload does not decrypt: ${(error as Error).message}`);
    }
    const text = plaintext.toString('utf8');
    let payload: unknown = text;
    try {
      payload = JSON.parse(text);
    } catch {
      // A service worker may receive any text; it is recorded as it is.
    }
    const pushId = (payload as { push_id?: unknown } | null)?.push_id;
    received.push({
      provider: 'webpush',
      token: endpoint,
      push_id: typeof pushId === 'string' ? pushId : null,
      headers: Object.fromEntries(
        Object.entries(req.headers).flatMap(([name, value]) =>
          typeof value === 'string' ? [[name, value]] : [],
        ),
      ),
      payload,
      at: new Date().toISOString(),
    });
    answer(res, 201, 'created', { location: `${origin}/m/${randomUUID()}` });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      if (!res.headersSent) answer(res, 500, error.message);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    provider: 'webpush',
    url: origin,
    credentials: generateVapidCredentials('mailto:notify@localhost'),
    subscribe,
    failNext(fault, times = 1) {
      for (let i = 0; i < times; i += 1) faults.push(fault);
    },
    received: () => [...received],
    markDead(token) {
      const subscription = subscriptions.get(token);
      if (!subscription) throw new Error(`no subscription with endpoint ${token}`);
      subscription.dead = true;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
};
