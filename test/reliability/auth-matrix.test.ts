/**
 * Reliability suite, auth part: the attack matrix over real HTTP and WebSocket connections on the local runtime,
 * which verifies tokens against a test IdP's key set (RS256/ES256) with replay protection on. Every attack is
 * a 401 (or a 403 for a valid token of the wrong kind), never a 5xx or a pass; an unreachable, slow or broken
 * key set is a 503, never a 401 and never a pass.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MAX_JWKS_BYTES } from '../../lambdas/core/auth/jwks-limits';
import { logger } from '../../lambdas/core/logger';
import { apiClient, eventually } from '../support/api';
import { generateSigningKey, type JwksServer, startJwksServer, weakRsaKey } from '../support/jwks-server';
import { type Runtime, startTestRuntime } from '../support/runtime';
import {
  authEnvFor,
  serviceToken,
  signToken,
  TEST_AUDIENCE,
  TEST_SERVICE_AUDIENCE,
  unsignedToken,
  userClaims,
  userToken,
} from '../support/tokens';
import { HandshakeError, TestClient } from '../support/ws-client';

let idp: JwksServer;
let runtime: Runtime;
const api = apiClient(() => runtime.httpUrl);

beforeAll(async () => {
  idp = await startJwksServer();
  // A key set cached for 1 s only, so the key-set failures below are met by a real fetch.
  runtime = await startTestRuntime({
    env: authEnvFor(idp, { replayProtection: 'all', jwksCacheTtl: '1s' }),
  });
}, 90_000);
afterAll(async () => {
  await runtime?.stop();
  await idp?.stop();
});

const nowSecs = () => Math.floor(Date.now() / 1000);
const event = { event_type: 'auth.matrix', source: 'publisher', version: 1, data: {} };

/** A user route and a service route, each tried with the token. */
const userRoute = (token: string) => api('GET', '/notifications/unread-count', token);
const serviceRoute = (token: string) => api('POST', '/events', token, event);
const publisher = () => serviceToken(idp.key('ES256'), { sub: 'publisher', scope: 'events:publish' });

const expectRefused = (
  response: { status: number; body?: Record<string, unknown> },
  status: 401 | 403,
  what: string,
) => {
  expect(response.status, what).toBe(status);
  expect(response.body, what).toMatchObject({
    code: status === 401 ? 'unauthorized' : 'forbidden',
    message: expect.any(String),
    request_id: expect.any(String),
  });
};

describe('auth attack matrix', () => {
  it('lets genuine tokens through (the matrix is not refusing everything)', async () => {
    expect((await userRoute(await userToken(idp.key('RS256'), { sub: 'mallory' }))).status).toBe(200);
    expect((await serviceRoute(await publisher())).status).toBe(202);
  });

  it('refuses forged tokens: unknown key, tampered payload, stripped or none signature, HS256 with the public key', async () => {
    const stranger = await generateSigningKey('RS256', idp.key('RS256').kid);
    const genuine = await userToken(idp.key('RS256'), { sub: 'mallory' });
    const [header, , signature] = genuine.split('.');
    const tampered = `${header}.${Buffer.from(JSON.stringify(userClaims({ sub: 'admin', roles: ['admin'] }))).toString('base64url')}.${signature}`;
    const publicKeyAsSecret = JSON.stringify(idp.key('RS256').publicJwk);
    const forged = {
      'a key not in the set (same kid)': await userToken(stranger, { sub: 'mallory' }),
      'a key not in the set (new kid)': await userToken(await generateSigningKey('ES256'), {
        sub: 'mallory',
      }),
      'a tampered payload': tampered,
      'no signature': `${header}.${genuine.split('.')[1]}.`,
      'alg none': unsignedToken(userClaims({ sub: 'mallory' })),
      'alg NONE': unsignedToken(userClaims({ sub: 'mallory' })).replace(
        Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url'),
        Buffer.from('{"alg":"NONE","typ":"JWT"}').toString('base64url'),
      ),
      'HS256 signed with the public key': await signToken(publicKeyAsSecret, userClaims({ sub: 'mallory' })),
      'HS256 with a kid of the set': await signToken(publicKeyAsSecret, userClaims({ sub: 'mallory' }), {
        header: { kid: idp.key('RS256').kid },
      }),
      'an algorithm outside the list': (await userToken(idp.key('RS256'))).replace(/^[^.]+/, () =>
        Buffer.from(JSON.stringify({ alg: 'PS256', kid: idp.key('RS256').kid })).toString('base64url'),
      ),
      'not a JWT': 'not-a-jwt',
      'a huge token': 'a'.repeat(15_000),
    };
    for (const [what, token] of Object.entries(forged)) {
      expectRefused(await userRoute(token), 401, what);
    }
  });

  it('refuses expired, not-yet-valid and issued-in-the-future tokens, and a wrong issuer', async () => {
    const cases = {
      expired: await userToken(idp.key(), { exp: nowSecs() - 120 }),
      'not yet valid': await userToken(idp.key(), { nbf: nowSecs() + 600 }),
      'issued in the future': await userToken(idp.key(), { iat: nowSecs() + 3600, exp: nowSecs() + 7200 }),
      'without exp': await userToken(idp.key(), { exp: undefined }),
      'without sub': await userToken(idp.key(), { sub: undefined }),
      'another issuer': await userToken(idp.key(), { iss: 'https://evil.example' }),
    };
    for (const [what, token] of Object.entries(cases)) expectRefused(await userRoute(token), 401, what);
    const expiredService = await serviceToken(idp.key('ES256'), {
      sub: 'publisher',
      scope: 'events:publish',
      exp: nowSecs() - 120,
    });
    expectRefused(await serviceRoute(expiredService), 401, 'expired service token');
  });

  it('refuses confused tokens: a user as a service, a service as a user, both audiences, missing scopes', async () => {
    expectRefused(
      await serviceRoute(await userToken(idp.key(), { sub: 'mallory' })),
      403,
      'user on service route',
    );
    expectRefused(await userRoute(await publisher()), 403, 'service on user route');
    const both = await userToken(idp.key(), { aud: [TEST_AUDIENCE, TEST_SERVICE_AUDIENCE] });
    expectRefused(await userRoute(both), 401, 'both audiences');
    expectRefused(await serviceRoute(await userToken(idp.key(), { aud: 'other' })), 401, 'other audience');
    const noScope = await serviceToken(idp.key('ES256'), { sub: 'publisher', scope: 'notifications:write' });
    expectRefused(await serviceRoute(noScope), 403, 'missing scope');
    const userWithScope = await userToken(idp.key(), { sub: 'mallory', scope: 'events:publish' });
    expectRefused(await serviceRoute(userWithScope), 403, 'user token carrying a scope claim');
    await expect(TestClient.open(`${runtime.wsUrl}?token=${await publisher()}`)).rejects.toEqual(
      new HandshakeError(403),
    );
  });

  it('refuses a replayed token, over HTTP and on the WebSocket handshake', async () => {
    const token = await userToken(idp.key(), { sub: 'mallory' });
    expect((await userRoute(token)).status).toBe(200);
    expectRefused(await userRoute(token), 401, 'replayed');
    const service = await publisher();
    expect((await serviceRoute(service)).status).toBe(202);
    expectRefused(await serviceRoute(service), 401, 'replayed service token');
    await expect(TestClient.open(`${runtime.wsUrl}?token=${token}`)).rejects.toEqual(new HandshakeError(401));
  });

  it('answers 503 while the key set is down, slow or garbage, and recovers', async () => {
    const unseen = await idp.addKey('RS256');
    try {
      // Past the 1 s cache age every request fetches the set again (a failed fetch caches nothing).
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      for (const mode of ['down', 'garbage', 'slow'] as const) {
        idp.behave(mode);
        const response = await userRoute(await userToken(unseen, { sub: 'mallory' }));
        expect(response.status, mode).toBe(503);
        expect(response.body, mode).toMatchObject({ code: 'unavailable' });
      }
    } finally {
      idp.behave('normal');
    }
    expect((await userRoute(await userToken(unseen, { sub: 'mallory' }))).status).toBe(200);
  }, 60_000);
});

describe('what the key set may hold', () => {
  it('refuses a token naming an RSA key under 2048 bits with 401 (it was a 503), and tells the operator which key', async () => {
    const weak = weakRsaKey(1024);
    idp.publishJwk(weak.publicJwk);
    const warnings = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    try {
      // Past the 1 s cache age, so the set with the weak key is fetched.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const token = weak.sign(userClaims({ sub: 'mallory' }));
      expectRefused(await userRoute(token), 401, 'a 1024-bit RSA key');
      expectRefused(
        await serviceRoute(
          weak.sign({
            ...userClaims({ sub: 'publisher' }),
            aud: TEST_SERVICE_AUDIENCE,
            scope: 'events:publish',
          }),
        ),
        401,
        'a 1024-bit RSA key (service)',
      );
      await expect(TestClient.open(`${runtime.wsUrl}?token=${token}`)).rejects.toEqual(
        new HandshakeError(401),
      );
      expect(warnings).toHaveBeenCalledWith(
        expect.stringContaining('RSA key shorter than the minimum'),
        expect.objectContaining({ kid: weak.kid, modulus_bits: 1024, min_bits: 2048 }),
      );
    } finally {
      warnings.mockRestore();
    }
    // The set's other keys still work.
    expect((await userRoute(await userToken(idp.key('RS256'), { sub: 'mallory' }))).status).toBe(200);
  }, 60_000);

  it('reads at most 1 MiB of the key set: a longer answer is a 503, logged, and not read to its end', async () => {
    const unseen = await idp.addKey('ES256');
    const errors = vi.spyOn(logger, 'error').mockImplementation(() => undefined);
    try {
      // Just under the limit is a key set like any other.
      idp.behave('oversized', undefined, MAX_JWKS_BYTES - 64 * 1024);
      const near = await eventually(
        async () => userRoute(await userToken(unseen, { sub: 'mallory' })),
        (response) => response.status !== 401,
      );
      expect(near.status).toBe(200);
      // 70 MiB, streamed without a content-length: the reader stops after the first MiB.
      idp.behave('oversized', undefined, 70 * 1024 * 1024);
      const refused = await eventually(
        async () => userRoute(await userToken(unseen, { sub: 'mallory' })),
        (response) => response.status !== 200,
      );
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ code: 'unavailable' });
      expect(idp.oversizedBytesSent).toBeLessThan(16 * 1024 * 1024);
      expect(errors).toHaveBeenCalledWith(
        expect.stringContaining('over the size limit'),
        expect.objectContaining({ jwks_url: idp.jwksUrl, max_bytes: MAX_JWKS_BYTES }),
      );
    } finally {
      errors.mockRestore();
      idp.behave('normal');
    }
    const recovered = await eventually(
      async () => userRoute(await userToken(unseen, { sub: 'mallory' })),
      (response) => response.status === 200,
    );
    expect(recovered.status).toBe(200);
  }, 60_000);
});
