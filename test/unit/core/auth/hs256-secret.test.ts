/**
 * On a development stage in AWS the HS256 key is not in the environment: the functions read it from Secrets
 * Manager (NOTIFY_HS256_SECRET_ARN) on the first token check.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SecretsManagerServer, startSecretsManager } from '../../../support/secrets-manager';
import { TEST_AUDIENCE, TEST_HS256_SECRET, TEST_ISSUER, userToken } from '../../../support/tokens';

const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:notify-dev-hs256-AbCdEf';

describe('HS256 key from Secrets Manager', () => {
  let secretsManager: SecretsManagerServer;
  const saved = { ...process.env };

  beforeAll(async () => {
    secretsManager = await startSecretsManager(TEST_HS256_SECRET);
    Object.assign(process.env, {
      ...secretsManager.clientEnv,
      SERVICE__AUTH__ISSUER: TEST_ISSUER,
      SERVICE__AUTH__AUDIENCE: TEST_AUDIENCE,
      NOTIFY_HS256_SECRET_ARN: SECRET_ARN,
    });
    delete process.env.SERVICE__AUTH__HS256_SECRET;
    delete process.env.SERVICE__AUTH__JWKS_URL;
  });

  afterAll(async () => {
    process.env = saved;
    await secretsManager.close();
  });

  it('verifies tokens signed with the secret, reading it once and retrying a failed read', async () => {
    const { tokenVerifier } = await import('../../../../lambdas/core/auth');
    secretsManager.failNext();
    await expect(tokenVerifier().verify(await userToken(TEST_HS256_SECRET))).rejects.toThrow();
    const principal = await tokenVerifier().verify(await userToken(TEST_HS256_SECRET, { sub: 'alice' }));
    expect(principal).toMatchObject({ kind: 'user', id: 'alice' });
    await tokenVerifier().verify(await userToken(TEST_HS256_SECRET));
    expect(secretsManager.reads).toEqual([SECRET_ARN, SECRET_ARN]);
    await expect(
      tokenVerifier().verify(await userToken('another-secret-of-at-least-32-bytes!!')),
    ).rejects.toThrow(expect.objectContaining({ code: 'unauthorized' }));
  });
});
