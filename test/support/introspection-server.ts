/**
 * A real OAuth 2.0 Token Introspection endpoint (RFC 7662) for tests: an HTTP server on 127.0.0.1 (free port)
 * that knows the opaque tokens the test issued and answers for them as an IdP would.
 *
 *   const idp = await startIntrospectionServer();
 *   const env = { ...authEnvFor(undefined), ...introspectionEnvFor(idp) };   // SERVICE__AUTH__* (tokens.ts)
 *   const token = idp.issue(userAnswer('alice'));        // an opaque token the endpoint calls active
 *   idp.revoke(token);                                    // from now on it answers {"active": false}
 *   idp.calls;                                            // introspection requests served so far
 *   idp.behave('slow');                                   // or 'down', 'garbage', 'endless', 'drip', 'normal'
 *   await idp.stop();
 *
 * It checks the request as RFC 7662 and RFC 6749 §2.3.1 ask (a form POST of `token` with HTTP Basic client
 * credentials) and answers 401 `invalid_client` to anything else, so a wrong request fails the test.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { listenOnLoopback, stopServer } from './loopback-server';
import { TEST_AUDIENCE, TEST_ISSUER, TEST_SERVICE_AUDIENCE } from './tokens';

export const TEST_INTROSPECTION_CLIENT_ID = 'notify-resource-server';
/** With characters RFC 6749 §2.3.1 makes the client form-encode before HTTP Basic. */
export const TEST_INTROSPECTION_CLIENT_SECRET = 'secret with spaces & symbols:+/=';
export const INTROSPECTION_PATH = '/oauth2/introspect';

/** What the endpoint answers for a token: an RFC 7662 object, or raw text (for malformed answers). */
export type IntrospectionAnswer = Record<string, unknown> | { readonly raw: string };

/** One request the endpoint received, decoded. */
export interface IntrospectionRequest {
  readonly method: string | undefined;
  readonly contentType: string | undefined;
  /** The form fields of the body. */
  readonly form: Record<string, string>;
  /** Client id and secret of the Basic authorization, form-decoded; undefined without one. */
  readonly client: { readonly id: string; readonly secret: string } | undefined;
}

export type IntrospectionBehaviour = 'normal' | 'down' | 'slow' | 'garbage' | 'endless' | 'drip';

export interface IntrospectionServer {
  /** The endpoint (`SERVICE__AUTH__INTROSPECTION_URL`). */
  readonly url: string;
  /** Introspection requests received so far (whatever their answer). */
  readonly calls: number;
  /** Every request received, oldest first. */
  readonly requests: readonly IntrospectionRequest[];
  /** Bytes of answer body written so far in the `endless` mode. */
  readonly endlessBytes: number;
  /** A new opaque token that the endpoint answers `answer` for. */
  issue(answer: IntrospectionAnswer): string;
  /** Answers `answer` for `token` from now on. */
  answer(token: string, answer: IntrospectionAnswer): void;
  /** The token is inactive from now on (revoked). */
  revoke(token: string): void;
  /**
   * `down`: 503; `slow`: answers after `slowMs` (default 6 s, beyond the 5 s deadline); `garbage`: 200, no JSON;
   * `endless`: 200 and a chunked answer that never ends, written as fast as it is read (`endlessBytes`); `drip`:
   * 200 at once, then one byte of the answer every 100 ms.
   */
  behave(mode: IntrospectionBehaviour, slowMs?: number): void;
  stop(): Promise<void>;
}

/** An opaque token as IdPs issue them (Ory Hydra's have a dot too, so "three parts" does not make a JWT). */
export const opaqueToken = (): string =>
  `at_${randomBytes(24).toString('base64url')}.${randomBytes(16).toString('base64url')}`;

const nowSecs = () => Math.floor(Date.now() / 1000);

/** The members every active answer of the test IdP has: issuer, audience, an hour left, Bearer type, a jti. */
const activeAnswer = (aud: string | string[]): Record<string, unknown> => ({
  active: true,
  iss: TEST_ISSUER,
  aud,
  token_type: 'Bearer',
  iat: nowSecs(),
  exp: nowSecs() + 3600,
  jti: randomUUID(),
});

/** An active answer for a user's access token (the user audience, as an array); `extra` adds or overrides. */
export const userAnswer = (sub: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  ...activeAnswer([TEST_AUDIENCE]),
  sub,
  client_id: 'web-app',
  scope: 'openid profile',
  ...extra,
});

/** An active answer for a service's client-credentials token: the service audience, `client_id` its name. */
export const serviceAnswer = (
  clientId: string,
  scope: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> => ({
  ...activeAnswer(TEST_SERVICE_AUDIENCE),
  sub: clientId,
  client_id: clientId,
  scope,
  ...extra,
});

/** SERVICE__AUTH__INTROSPECTION_* settings that point at `server`; add them to `authEnvFor(...)`. */
export const introspectionEnvFor = (
  server: Pick<IntrospectionServer, 'url'>,
  extra: { cacheTtl?: string; callsPerSec?: number } = {},
): Record<string, string> => ({
  SERVICE__AUTH__INTROSPECTION_URL: server.url,
  SERVICE__AUTH__INTROSPECTION_CLIENT_ID: TEST_INTROSPECTION_CLIENT_ID,
  SERVICE__AUTH__INTROSPECTION_CLIENT_SECRET: TEST_INTROSPECTION_CLIENT_SECRET,
  ...(extra.cacheTtl ? { SERVICE__AUTH__INTROSPECTION_CACHE_TTL: extra.cacheTtl } : {}),
  ...(extra.callsPerSec ? { SERVICE__AUTH__INTROSPECTION_CALLS_PER_SEC: String(extra.callsPerSec) } : {}),
});

const formDecode = (text: string): string => decodeURIComponent(text.replace(/\+/g, ' '));

const basicClient = (header: string | undefined): IntrospectionRequest['client'] => {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header ?? '');
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon === -1) return undefined;
  return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
};

const bodyOf = async (request: IncomingMessage): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

export const startIntrospectionServer = async (): Promise<IntrospectionServer> => {
  const answers = new Map<string, IntrospectionAnswer>();
  const requests: IntrospectionRequest[] = [];
  let behaviour: IntrospectionBehaviour = 'normal';
  let slowMs = 6_000;
  let endlessBytes = 0;

  const server: Server = createServer(async (request, response) => {
    if (request.url !== INTROSPECTION_PATH) {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end('{"error":"not found"}');
      return;
    }
    const body = await bodyOf(request);
    const contentType = request.headers['content-type'];
    const form = Object.fromEntries(new URLSearchParams(body));
    const client = basicClient(request.headers.authorization);
    requests.push({ method: request.method, contentType, form, client });
    const send = (status: number, text: string) => {
      if (response.destroyed) return;
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(text);
    };
    if (behaviour === 'down') return send(503, '{"error":"temporarily_unavailable"}');
    if (behaviour === 'garbage') return send(200, '<html>maintenance</html>');
    if (behaviour === 'endless' || behaviour === 'drip') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"active":true,"padding":"');
      if (behaviour === 'drip') {
        const timer = setInterval(() => response.write('a'), 100);
        response.on('close', () => clearInterval(timer));
        return;
      }
      const chunk = 'a'.repeat(64 * 1024);
      const pump = () => {
        // Respects backpressure: only what the client reads is written.
        while (!response.destroyed) {
          endlessBytes += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
      };
      return pump();
    }
    if (
      request.method !== 'POST' ||
      !contentType?.startsWith('application/x-www-form-urlencoded') ||
      client?.id !== TEST_INTROSPECTION_CLIENT_ID ||
      client.secret !== TEST_INTROSPECTION_CLIENT_SECRET
    ) {
      return send(401, '{"error":"invalid_client"}');
    }
    if (typeof form.token !== 'string') return send(400, '{"error":"invalid_request"}');
    const answer = answers.get(form.token) ?? { active: false };
    const text = 'raw' in answer && typeof answer.raw === 'string' ? answer.raw : JSON.stringify(answer);
    setTimeout(() => send(200, text), behaviour === 'slow' ? slowMs : 0);
  });
  const origin = await listenOnLoopback(server);

  return {
    url: `${origin}${INTROSPECTION_PATH}`,
    get calls() {
      return requests.length;
    },
    requests,
    get endlessBytes() {
      return endlessBytes;
    },
    issue: (answer) => {
      const token = opaqueToken();
      answers.set(token, answer);
      return token;
    },
    answer: (token, answer) => {
      answers.set(token, answer);
    },
    revoke: (token) => {
      answers.set(token, { active: false });
    },
    behave: (mode, delayMs) => {
      behaviour = mode;
      if (delayMs !== undefined) slowMs = delayMs;
    },
    stop: () => stopServer(server),
  };
};
