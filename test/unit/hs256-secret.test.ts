/**
 * On a development stage in AWS the HS256 key is not in the environment: the functions read it from Secrets
 * Manager (NOTIFY_HS256_SECRET_ARN) on the first token check. Secrets Manager has no local stand-in, so a
 * 127.0.0.1 server answers GetSecretValue in its JSON protocol for the real SDK client.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_AUDIENCE, TEST_HS256_SECRET, TEST_ISSUER, userToken } from '../support/tokens';

const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:notify-dev-hs256-AbCdEf';

describe('HS256 key from Secrets Manager', () => {
  let server: Server;
  const requests: { target: string | undefined; body: Record<string, unknown> }[] = [];
  let failNext = false;
  const saved = { ...process.env };

  beforeAll(async () => {
    server = createServer((request, response) => {
      let text = '';
      request.on('data', (chunk) => {
        text += chunk;
      });
      request.on('end', () => {
        const body = JSON.parse(text) as Record<string, unknown>;
        requests.push({ target: request.headers['x-amz-target'] as string | undefined, body });
        response.setHeader('content-type', 'application/x-amz-json-1.1');
        if (failNext) {
          failNext = false;
          response.statusCode = 500;
          response.end(JSON.stringify({ __type: 'InternalServiceError', message: 'down' }));
          return;
        }
        response.end(
          JSON.stringify({ ARN: SECRET_ARN, Name: 'notify-dev-hs256', SecretString: TEST_HS256_SECRET }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    Object.assign(process.env, {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_MAX_ATTEMPTS: '1',
      AWS_ENDPOINT_URL_SECRETS_MANAGER: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      SERVICE__AUTH__ISSUER: TEST_ISSUER,
      SERVICE__AUTH__AUDIENCE: TEST_AUDIENCE,
      NOTIFY_HS256_SECRET_ARN: SECRET_ARN,
    });
    delete process.env.SERVICE__AUTH__HS256_SECRET;
    delete process.env.SERVICE__AUTH__JWKS_URL;
  });

  afterAll(async () => {
    process.env = saved;
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('verifies tokens signed with the secret, reading it once and retrying a failed read', async () => {
    const { tokenVerifier } = await import('../../lambdas/core/auth');
    failNext = true;
    await expect(tokenVerifier().verify(await userToken(TEST_HS256_SECRET))).rejects.toThrow();
    const principal = await tokenVerifier().verify(await userToken(TEST_HS256_SECRET, { sub: 'alice' }));
    expect(principal).toMatchObject({ kind: 'user', id: 'alice' });
    await tokenVerifier().verify(await userToken(TEST_HS256_SECRET));
    expect(requests).toEqual([
      { target: 'secretsmanager.GetSecretValue', body: { SecretId: SECRET_ARN } },
      { target: 'secretsmanager.GetSecretValue', body: { SecretId: SECRET_ARN } },
    ]);
    await expect(
      tokenVerifier().verify(await userToken('another-secret-of-at-least-32-bytes!!')),
    ).rejects.toThrow(expect.objectContaining({ code: 'unauthorized' }));
  });
});
