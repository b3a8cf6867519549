/**
 * Opaque tokens over real HTTP and WebSocket connections: the local runtime checks every token that is not a JWT
 * at a test IdP's RFC 7662 endpoint (test/support/introspection-server.ts), and keeps verifying JWTs itself.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { sweep } from '../../lambdas/domain/realtime/sweeper';
import { apiClient } from '../support/api';
import {
  type IntrospectionServer,
  introspectionEnvFor,
  opaqueToken,
  serviceAnswer,
  startIntrospectionServer,
  userAnswer,
} from '../support/introspection-server';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { authEnvFor } from '../support/tokens';
import { HandshakeError, TestClient } from '../support/ws-client';

/** The budget of new tokens the runtime's process checks per second (small, so a flood crosses it). */
const CALLS_PER_SEC = 5;
/** The default `auth.clock_skew_secs`: tokens pass until `exp` + this. */
const CLOCK_SKEW_SECS = 30;

let idp: IntrospectionServer;
let runtime: Runtime;
const api = apiClient(() => runtime.httpUrl);
const open: TestClient[] = [];

beforeAll(async () => {
  idp = await startIntrospectionServer();
  runtime = await startTestRuntime({
    env: {
      // HS256 as well, so the runtime's own JWTs show that JWTs stay local.
      ...authEnvFor(undefined),
      ...introspectionEnvFor(idp, { callsPerSec: CALLS_PER_SEC }),
      NOTIFY_WS_IDLE_TIMEOUT_SECS: '600',
    },
  });
}, 90_000);
afterAll(async () => {
  await runtime?.stop();
  await idp?.stop();
});
afterEach(async () => {
  idp.behave('normal');
  await Promise.all(open.splice(0).map((client) => client.close()));
  // Each test starts with the budget of a quiet second.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
});

const connect = async (query = ''): Promise<TestClient> => {
  const client = await TestClient.open(`${runtime.wsUrl}${query}`);
  open.push(client);
  return client;
};

const unreadCount = (token: string) => api('GET', '/notifications/unread-count', token);
const publish = (token: string) =>
  api('POST', '/events', token, { event_type: 'opaque.check', source: 'billing', version: 1, data: {} });

describe('opaque tokens over REST', () => {
  it('serves users and services whose tokens the IdP vouches for, and asks once per token', async () => {
    const alice = idp.issue(userAnswer('alice'));
    const before = idp.calls;
    expect(await unreadCount(alice)).toEqual({ status: 200, body: { count: 0 } });
    expect((await unreadCount(alice)).status).toBe(200);
    expect(idp.calls - before).toBe(1);
    const billing = idp.issue(serviceAnswer('billing', 'events:publish'));
    expect((await publish(billing)).status).toBe(202);
    const noScope = idp.issue(serviceAnswer('billing', 'notifications:write'));
    expect((await publish(noScope)).body).toMatchObject({ code: 'forbidden' });
  });

  it('refuses inactive and refresh tokens with a 401 that says why', async () => {
    expect(await unreadCount(opaqueToken())).toMatchObject({
      status: 401,
      body: { code: 'unauthorized', message: 'The token is not active' },
    });
    expect(await unreadCount(idp.issue(userAnswer('alice', { token_use: 'refresh_token' })))).toMatchObject({
      status: 401,
      body: {
        code: 'unauthorized',
        message: 'A refresh token grants no API access: present an access token',
      },
    });
  });

  it('refuses an introspected subject or service name that a name may not hold with a 401, as for a JWT', async () => {
    for (const answer of [
      userAnswer('forged\nline'),
      userAnswer('\ud800'),
      serviceAnswer('billing\u202e', 'events:publish'),
    ]) {
      expect(await unreadCount(idp.issue(answer)), JSON.stringify(answer)).toMatchObject({
        status: 401,
        body: { code: 'unauthorized' },
      });
    }
  });

  it('keeps verifying JWTs itself: they never reach the endpoint', async () => {
    const before = idp.calls;
    expect((await unreadCount(await runtime.mintUserToken('jwt-user'))).status).toBe(200);
    expect(idp.calls).toBe(before);
  });

  it('answers 503, not 401, while the endpoint is down', async () => {
    idp.behave('down');
    expect(await unreadCount(idp.issue(userAnswer('alice')))).toMatchObject({
      status: 503,
      body: { code: 'unavailable' },
    });
  });

  it('bounds the calls a flood of made-up tokens causes: the excess is 503 with Retry-After', async () => {
    const alice = idp.issue(userAnswer('alice'));
    expect((await unreadCount(alice)).status).toBe(200);
    const before = idp.calls;
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 100 }, async () => {
        const response = await fetch(`${runtime.httpUrl}/notifications/unread-count`, {
          headers: { authorization: `Bearer ${opaqueToken()}` },
        });
        const body = (await response.json()) as { code: string };
        return { status: response.status, code: body.code, retryAfter: response.headers.get('retry-after') };
      }),
    );
    const elapsedSecs = (Date.now() - started) / 1000;
    // The budget refills at CALLS_PER_SEC from a full bucket: that is the most the IdP can have seen.
    expect(idp.calls - before).toBeLessThanOrEqual(CALLS_PER_SEC * (1 + Math.ceil(elapsedSecs)));
    const refused = answers.filter((answer) => answer.status === 401);
    const excess = answers.filter((answer) => answer.status === 503);
    expect(refused.length + excess.length).toBe(answers.length);
    expect(excess.length).toBeGreaterThan(0);
    for (const answer of excess) expect(answer).toMatchObject({ code: 'unavailable', retryAfter: '1' });
    // A user whose token was checked before is served from the cache throughout.
    expect((await unreadCount(alice)).status).toBe(200);
  });
});

describe('opaque tokens on the WebSocket', () => {
  it('connects with ?token= and authenticates with the auth frame', async () => {
    const viaQuery = await connect(`?token=${idp.issue(userAnswer('erin'))}`);
    expect(await viaQuery.nextOfType('session')).toMatchObject({ type: 'session' });
    const viaFrame = await connect();
    expect(await viaFrame.request({ type: 'auth', token: idp.issue(userAnswer('erin')) })).toMatchObject({
      type: 'ack',
      op: 'auth',
    });
  });

  it('refuses refresh, inactive and service tokens at the handshake and in the auth frame', async () => {
    const refresh = idp.issue(userAnswer('erin', { typ: 'Refresh' }));
    await expect(connect(`?token=${refresh}`)).rejects.toEqual(new HandshakeError(401));
    await expect(connect(`?token=${opaqueToken()}`)).rejects.toEqual(new HandshakeError(401));
    await expect(connect(`?token=${idp.issue(serviceAnswer('billing', ''))}`)).rejects.toEqual(
      new HandshakeError(403),
    );
    const client = await connect();
    expect(await client.request({ type: 'auth', token: refresh })).toMatchObject({
      type: 'error',
      code: 'unauthorized',
      message: 'A refresh token grants no API access: present an access token',
    });
  });

  it('answers the auth frame with unavailable while the endpoint is down', async () => {
    const client = await connect();
    idp.behave('down');
    expect(await client.request({ type: 'auth', token: idp.issue(userAnswer('erin')) })).toMatchObject({
      type: 'error',
      code: 'unavailable',
    });
  });

  it("ends an open connection at the introspected token's exp, as for a JWT", async () => {
    // Accepted for 10 s more: exp is past, within the clock skew; the sweep below runs as if after that.
    const acceptedForSecs = 10;
    const exp = Math.floor(Date.now() / 1000) + acceptedForSecs - CLOCK_SKEW_SECS;
    const viaQuery = await connect(`?token=${idp.issue(userAnswer('frank', { exp }))}`);
    await viaQuery.nextOfType('session');
    const viaFrame = await connect();
    expect(
      await viaFrame.request({ type: 'auth', token: idp.issue(userAnswer('frank', { exp })) }),
    ).toMatchObject({
      type: 'ack',
    });
    const lasting = await connect(`?token=${idp.issue(userAnswer('frank'))}`);
    await lasting.nextOfType('session');
    await sweep(Date.now() + (acceptedForSecs + 1) * 1000);
    for (const client of [viaQuery, viaFrame]) {
      expect(await client.nextOfType('error')).toMatchObject({ code: 'token_expired' });
      await client.waitClosed();
    }
    expect(lasting.closed).toBeUndefined();
  });
});
