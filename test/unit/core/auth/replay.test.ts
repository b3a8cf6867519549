import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAuthConfig } from '../../../../common/settings';
import { createTokenVerifier, DynamoDbTokenReplayStore } from '../../../../lambdas/core/auth';
import { ServiceError } from '../../../../lambdas/core/errors';
import { envNames, wiring } from '../../../../lib/wiring';
import {
  createTables,
  type DynamoDbLocal,
  deleteTables,
  LOCAL_AWS_ENV,
} from '../../../../local/dynamodb-local';
import { type JwksServer, startJwksServer } from '../../../support/jwks-server';
import { openTestDynamoDb } from '../../../support/shared-dynamodb';
import { authEnvFor, serviceToken, userToken } from '../../../support/tokens';

/** jti replay protection on the declared `tokenReplay` table in DynamoDB Local, shared by two "Lambda instances". */
describe('replay protection', () => {
  let dynamo: DynamoDbLocal;
  let idp: JwksServer;
  let tableName: string;
  const savedEnv = { ...process.env };

  /** A separate SDK client per verifier, as two Lambda instances would have. */
  const instanceClient = () =>
    DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: dynamo.endpoint,
        region: LOCAL_AWS_ENV.AWS_REGION,
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
    );
  const replayConfig = (scope: 'service' | 'all' = 'all') =>
    parseAuthConfig(authEnvFor(idp, { replayProtection: scope }));
  const statusOf = (promise: Promise<unknown>) =>
    promise.then(
      () => 'accepted',
      (error: unknown) => (error instanceof ServiceError ? `${error.status} ${error.message}` : 'unexpected'),
    );

  beforeAll(async () => {
    const [opened, jwks] = await Promise.all([openTestDynamoDb(), startJwksServer({ algs: ['ES256'] })]);
    [dynamo, idp] = [opened.db, jwks];
    const replayTable = wiring.tables.filter((table) => table.id === 'tokenReplay');
    const tableEnv = await createTables(dynamo.client, replayTable, opened.tablePrefix);
    const name = tableEnv[envNames.tableName('tokenReplay')];
    if (!name) throw new Error('the wiring declares no replay table');
    tableName = name;
  });
  afterAll(async () => {
    process.env = savedEnv;
    if (dynamo) await deleteTables(dynamo.client, [tableName]);
    await Promise.all([dynamo?.stop(), idp?.stop()]);
  });

  it('accepts a jti once across two verifier instances', async () => {
    const first = createTokenVerifier(replayConfig(), {
      tokenReplayStore: new DynamoDbTokenReplayStore(tableName, instanceClient()),
    });
    const second = createTokenVerifier(replayConfig(), {
      tokenReplayStore: new DynamoDbTokenReplayStore(tableName, instanceClient()),
    });
    const token = await userToken(idp.key('ES256'));

    expect(await statusOf(first.verify(token))).toBe('accepted');
    expect(await statusOf(second.verify(token))).toBe('401 The token has already been used');
    expect(await statusOf(first.verify(token))).toBe('401 The token has already been used');
    expect(await statusOf(second.verify(await userToken(idp.key('ES256'))))).toBe('accepted');
  });

  it('with "service", makes service tokens single-use and lets user tokens be reused (browser apps)', async () => {
    const verifier = createTokenVerifier(replayConfig('service'), {
      tokenReplayStore: new DynamoDbTokenReplayStore(tableName, instanceClient()),
    });
    const user = await userToken(idp.key('ES256'), { jti: undefined });
    expect(await statusOf(verifier.verify(user))).toBe('accepted');
    expect(await statusOf(verifier.verify(user))).toBe('accepted');
    const service = await serviceToken(idp.key('ES256'));
    expect(await statusOf(verifier.verify(service))).toBe('accepted');
    expect(await statusOf(verifier.verify(service))).toBe('401 The token has already been used');
    const withoutJti = await serviceToken(idp.key('ES256'), { jti: undefined });
    expect(await statusOf(verifier.verify(withoutJti))).toBe('401 The token has no valid "jti" claim');
  });

  it('requires a jti when replay protection is on', async () => {
    const verifier = createTokenVerifier(replayConfig(), {
      tokenReplayStore: new DynamoDbTokenReplayStore(tableName, instanceClient()),
    });
    const token = await serviceToken(idp.key('ES256'), { jti: undefined });
    expect(await statusOf(verifier.verify(token))).toBe('401 The token has no valid "jti" claim');
  });

  it('lets a token be reused when replay protection is off (the default)', async () => {
    const verifier = createTokenVerifier(parseAuthConfig(authEnvFor(idp)));
    const token = await userToken(idp.key('ES256'), { jti: undefined });
    expect(await statusOf(verifier.verify(token))).toBe('accepted');
    expect(await statusOf(verifier.verify(token))).toBe('accepted');
  });

  it('stores the entry with ttl and ignores an entry past its ttl that DynamoDB has not deleted yet', async () => {
    const nowSecs = Math.floor(Date.now() / 1000);
    const store = new DynamoDbTokenReplayStore(tableName, instanceClient(), () => nowSecs);
    const jti = `stale-${nowSecs}`;
    expect(await store.firstUse(jti, nowSecs - 10)).toBe(true);
    expect(await store.firstUse(jti, nowSecs + 60)).toBe(true);
    expect(await store.firstUse(jti, nowSecs + 60)).toBe(false);
  });

  it('uses the process-wide client, which follows AWS_ENDPOINT_URL_DYNAMODB', async () => {
    Object.assign(process.env, LOCAL_AWS_ENV, { AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint });
    const store = new DynamoDbTokenReplayStore(tableName);
    const jti = `default-client-${Date.now()}`;
    expect(await store.firstUse(jti, Math.floor(Date.now() / 1000) + 60)).toBe(true);
    expect(await store.firstUse(jti, Math.floor(Date.now() / 1000) + 60)).toBe(false);
  });
});
