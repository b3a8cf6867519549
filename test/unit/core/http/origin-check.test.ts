/**
 * Behind CloudFront + WAF the HTTP functions refuse requests that lack CloudFront's secret origin header,
 * so the execute-api URL cannot be used to go around the WAF (docs/deploy.md, WAF).
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOriginCheck, ORIGIN_SECRET_REFRESH_MS } from '../../../../lambdas/core/http/origin-check';
import { httpRoute } from '../../../../lambdas/core/http/route';
import { envNames, type HttpRoute, ORIGIN_VERIFY_HEADER } from '../../../../lib/wiring';
import { rejection } from '../../../support/await';
import { recordFunctionLogs } from '../../../support/function-logs';
import { type SecretsManagerServer, startSecretsManager } from '../../../support/secrets-manager';
import { authEnvFor, TEST_HS256_SECRET, userToken } from '../../../support/tokens';

describe('createOriginCheck', () => {
  const clock = () => {
    let time = 1_000_000;
    return { now: () => time, advance: (ms: number) => (time += ms) };
  };

  it('accepts the secret and refuses a missing or different header with 403 forbidden', async () => {
    const check = createOriginCheck(async () => 'the-secret');
    await expect(check.assert('the-secret')).resolves.toBeUndefined();
    for (const presented of [undefined, '', 'the-secre', 'the-secret ', 'THE-SECRET']) {
      expect(await rejection(check.assert(presented))).toMatchObject({ code: 'forbidden' });
    }
  });

  it('follows a rotation by re-reading on a mismatch, at most once per interval', async () => {
    let value = 'old';
    let reads = 0;
    const time = clock();
    const check = createOriginCheck(async () => {
      reads += 1;
      return value;
    }, time.now);
    await check.assert('old');
    value = 'new';
    // Read a moment ago: a mismatch does not re-read yet, so forged headers cannot drive reads.
    for (let i = 0; i < 5; i += 1) {
      expect(await rejection(check.assert('new'))).toMatchObject({ code: 'forbidden' });
    }
    expect(reads).toBe(1);
    time.advance(ORIGIN_SECRET_REFRESH_MS);
    await check.assert('new');
    expect(reads).toBe(2);
    expect(await rejection(check.assert('old'))).toMatchObject({ code: 'forbidden' });
    expect(reads).toBe(2);
  });

  it('answers 503 when the secret cannot be read, and reads again on the next request', async () => {
    let fail = true;
    const check = createOriginCheck(async () => {
      if (fail) throw new Error('AccessDeniedException');
      return 'the-secret';
    });
    const logs = recordFunctionLogs();
    expect(await rejection(check.assert('the-secret'))).toMatchObject({ code: 'unavailable' });
    // The client gets a 503; the operator gets the reason.
    expect(logs.at('ERROR')).toMatchObject([
      { message: 'origin secret unreadable', error: { message: 'AccessDeniedException' } },
    ]);
    fail = false;
    await expect(check.assert('the-secret')).resolves.toBeUndefined();
  });
});

describe('HTTP routes behind CloudFront', () => {
  const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:000000000000:secret:notify-prod-origin-AbCdEf';
  const ORIGIN_SECRET = 'origin-secret-value-from-secrets-manager';
  let secretsManager: SecretsManagerServer;
  const saved = { ...process.env };

  const route: HttpRoute = {
    id: 'test.origin',
    method: 'GET',
    path: '/things',
    handler: 'unused.ts',
    access: { users: 'any' },
  };
  const handler = httpRoute(route, {}, async (request) => ({
    status: 200,
    body: { principal: request.principal.id },
  }));
  const call = async (headers: Record<string, string>) => {
    const event = {
      version: '2.0',
      routeKey: 'GET /api/v1/things',
      rawPath: '/api/v1/things',
      rawQueryString: '',
      headers,
      isBase64Encoded: false,
      requestContext: { requestId: 'apigw-1', http: { method: 'GET', path: '/api/v1/things' } },
    } as unknown as APIGatewayProxyEventV2;
    const context = { awsRequestId: 'lambda-1' } as unknown as Context;
    const result = (await handler(
      event,
      context as Parameters<typeof handler>[1],
    )) as APIGatewayProxyStructuredResultV2;
    return { status: result.statusCode, json: JSON.parse(result.body ?? '{}') };
  };

  beforeAll(async () => {
    secretsManager = await startSecretsManager(ORIGIN_SECRET);
    Object.assign(process.env, authEnvFor(undefined), {
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_MAX_ATTEMPTS: '1',
      AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsManager.endpoint,
      [envNames.originSecretArn]: SECRET_ARN,
    });
  });
  afterAll(async () => {
    process.env = saved;
    await secretsManager.close();
  });

  it('refuses requests without the origin header before looking at the token', async () => {
    const authorization = `Bearer ${await userToken(TEST_HS256_SECRET, { sub: 'alice' })}`;
    const direct = await call({ authorization });
    expect(direct.status).toBe(403);
    expect(direct.json).toEqual({
      code: 'forbidden',
      message: expect.stringContaining('CloudFront'),
      request_id: expect.any(String),
    });
    const forged = await call({ authorization, [ORIGIN_VERIFY_HEADER]: 'guess' });
    expect(forged.status).toBe(403);
    // Origin first: a request that did not come through CloudFront learns nothing about its token.
    expect((await call({ [ORIGIN_VERIFY_HEADER]: 'guess' })).status).toBe(403);
    expect((await call({ [ORIGIN_VERIFY_HEADER]: ORIGIN_SECRET })).status).toBe(401);

    const through = await call({ authorization, [ORIGIN_VERIFY_HEADER]: ORIGIN_SECRET });
    expect(through).toEqual({ status: 200, json: { principal: 'alice' } });
    // Read once for the instance, by the ARN the stack gives the function.
    expect(secretsManager.reads).toEqual([SECRET_ARN]);
  });
});
