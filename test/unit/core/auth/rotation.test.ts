import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseAuthConfig } from '../../../../common/settings';
import { createTokenVerifier, JWKS_COOLDOWN_MS, type TokenVerifier } from '../../../../lambdas/core/auth';
import { ServiceError } from '../../../../lambdas/core/errors';
import { generateSigningKey, type JwksServer, startJwksServer } from '../../../support/jwks-server';
import { authEnvFor, userToken } from '../../../support/tokens';

/**
 * Key rotation against a real JWKS server. Only `Date` is faked: jose measures the cache lifetime and the
 * cooldown with Date.now(), so the clock is moved instead of waiting; sockets and timers stay real.
 */
describe('key set rotation and refetch', () => {
  let idp: JwksServer;
  let verifier: TokenVerifier;

  const advanceClock = (ms: number) => vi.setSystemTime(Date.now() + ms);
  const statusOf = (promise: Promise<unknown>) =>
    promise.then(
      () => 'accepted',
      (error: unknown) => (error instanceof ServiceError ? error.status : 'unexpected'),
    );

  beforeEach(async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    idp = await startJwksServer({ algs: ['RS256'] });
    verifier = createTokenVerifier(parseAuthConfig(authEnvFor(idp, { jwksCacheTtl: '5m' })));
    // Warm the cache as a first request would.
    await verifier.verify(await userToken(idp.key()));
    expect(idp.fetchCount).toBe(1);
  });
  afterEach(async () => {
    vi.useRealTimers();
    await idp.stop();
  });

  it('accepts a token with a kid published after the set was cached, once the cooldown has passed', async () => {
    const rotated = await idp.addKey('RS256');
    advanceClock(JWKS_COOLDOWN_MS + 1_000);
    const principal = await verifier.verify(await userToken(rotated, { sub: 'after-rotation' }));
    expect(principal).toMatchObject({ kind: 'user', id: 'after-rotation' });
    expect(idp.fetchCount).toBe(2);
  });

  it('refetches at most once per cooldown however many unknown kids arrive', async () => {
    const stranger = await generateSigningKey('RS256');
    const unknownKidToken = () => userToken(stranger, {}, { header: { kid: `kid-${randomUUID()}` } });
    advanceClock(JWKS_COOLDOWN_MS + 1_000);
    const before = idp.fetchCount;

    const concurrent = await Promise.all(
      Array.from({ length: 50 }, async () => statusOf(verifier.verify(await unknownKidToken()))),
    );
    const sequential: unknown[] = [];
    for (let i = 0; i < 50; i += 1) sequential.push(await statusOf(verifier.verify(await unknownKidToken())));

    expect(new Set([...concurrent, ...sequential])).toEqual(new Set([401]));
    expect(idp.fetchCount - before).toBe(1);
  });

  it('keeps an unknown kid rejected without refetching while the cooldown lasts', async () => {
    const rotated = await idp.addKey('RS256');
    expect(await statusOf(verifier.verify(await userToken(rotated)))).toBe(401);
    expect(idp.fetchCount).toBe(1);
  });

  it('keeps trusting the cached set for its whole lifetime, without refetching', async () => {
    const retired = idp.key();
    await idp.addKey('RS256');
    idp.removeKey(retired.kid);
    advanceClock(4 * 60_000); // within the 5 minutes the set is cached for
    await expect(verifier.verify(await userToken(retired))).resolves.toMatchObject({ kind: 'user' });
    expect(idp.fetchCount).toBe(1);
  });

  it('rejects a token of a key removed from the set once the cache lifetime has passed', async () => {
    const retired = idp.key();
    await idp.addKey('RS256');
    idp.removeKey(retired.kid);
    advanceClock(5 * 60_000 + 1_000);
    expect(await statusOf(verifier.verify(await userToken(retired)))).toBe(401);
    expect(idp.fetchCount).toBe(2);
    // The new key of the refreshed set works.
    await expect(verifier.verify(await userToken(idp.key()))).resolves.toMatchObject({ kind: 'user' });
  });

  it('answers 503, not 401, when the key set cannot be fetched', async () => {
    await idp.stop();
    const cold = createTokenVerifier(parseAuthConfig(authEnvFor(idp)));
    const refused = await cold.verify(await userToken(idp.key())).catch((error: unknown) => error);
    expect(refused).toMatchObject({
      status: 503,
      message: 'The token could not be checked, try again later',
    });
    // Restart so afterEach's stop has a server to stop.
    idp = await startJwksServer({ algs: ['RS256'] });
  });
});
