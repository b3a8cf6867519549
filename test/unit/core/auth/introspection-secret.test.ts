/**
 * On a deployed stage the introspection client secret is not in the environment: the functions read it from
 * Secrets Manager (NOTIFY_INTROSPECTION_CLIENT_SECRET_ARN) on the first token check, once per instance.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type IntrospectionServer,
  introspectionEnvFor,
  startIntrospectionServer,
  TEST_INTROSPECTION_CLIENT_SECRET,
  userAnswer,
} from '../../../support/introspection-server';
import { type SecretsManagerServer, startSecretsManager } from '../../../support/secrets-manager';
import { TEST_AUDIENCE, TEST_ISSUER } from '../../../support/tokens';

const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:notify-introspection-AbCdEf';

describe('introspection client secret from Secrets Manager', () => {
  let secretsManager: SecretsManagerServer;
  let idp: IntrospectionServer;
  const saved = { ...process.env };

  beforeAll(async () => {
    secretsManager = await startSecretsManager(TEST_INTROSPECTION_CLIENT_SECRET);
    idp = await startIntrospectionServer();
    const { SERVICE__AUTH__INTROSPECTION_CLIENT_SECRET: _, ...settings } = introspectionEnvFor(idp);
    for (const name of Object.keys(process.env))
      if (name.startsWith('SERVICE__AUTH__')) delete process.env[name];
    Object.assign(process.env, {
      ...secretsManager.clientEnv,
      SERVICE__AUTH__ISSUER: TEST_ISSUER,
      SERVICE__AUTH__AUDIENCE: TEST_AUDIENCE,
      ...settings,
      NOTIFY_INTROSPECTION_CLIENT_SECRET_ARN: SECRET_ARN,
    });
  });

  afterAll(async () => {
    process.env = saved;
    await secretsManager.close();
    await idp.stop();
  });

  it('authenticates at the endpoint with the secret, reading it once and retrying a failed read', async () => {
    const { tokenVerifier } = await import('../../../../lambdas/core/auth');
    secretsManager.failNext();
    await expect(tokenVerifier().verify(idp.issue(userAnswer('alice')))).rejects.toThrow();
    expect(await tokenVerifier().verify(idp.issue(userAnswer('alice')))).toMatchObject({
      kind: 'user',
      id: 'alice',
    });
    await tokenVerifier().verify(idp.issue(userAnswer('bob')));
    expect(secretsManager.reads).toEqual([SECRET_ARN, SECRET_ARN]);
    expect(idp.requests.map((request) => request.client?.secret)).toEqual([
      TEST_INTROSPECTION_CLIENT_SECRET,
      TEST_INTROSPECTION_CLIENT_SECRET,
    ]);
  });
});
