import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetAuthConfigForTests } from '../../../../common/settings';
import { tokenVerifier } from '../../../../lambdas/core/auth';
import { type JwksServer, startJwksServer } from '../../../support/jwks-server';
import { authEnvFor, serviceToken, TEST_HS256_SECRET, userToken } from '../../../support/tokens';

/** The verifier handlers use: built once from process.env (SERVICE__AUTH__*). */
describe('tokenVerifier()', () => {
  let idp: JwksServer;
  const saved = { ...process.env };

  beforeAll(async () => {
    idp = await startJwksServer();
    Object.assign(process.env, authEnvFor(idp, { hs256: true }));
    resetAuthConfigForTests();
  });
  afterAll(async () => {
    process.env = saved;
    resetAuthConfigForTests();
    await idp.stop();
  });

  it('is one verifier per process, configured from the environment', async () => {
    const verifier = tokenVerifier();
    expect(tokenVerifier()).toBe(verifier);
    await expect(
      verifier.verify(await userToken(idp.key('ES256'), { sub: 'env-user' })),
    ).resolves.toMatchObject({
      kind: 'user',
      id: 'env-user',
    });
    await expect(
      verifier.verify(await serviceToken(TEST_HS256_SECRET, { service: 'dev' })),
    ).resolves.toMatchObject({
      kind: 'service',
      id: 'dev',
    });
    // The key set was fetched once and is reused by later calls.
    await verifier.verify(await userToken(idp.key('RS256')));
    expect(idp.fetchCount).toBe(1);
  });
});
