/**
 * The `session` frame of a connection authenticated at `$connect` (docs/realtime.md, connecting): the welcome
 * message names the session, so the worker claims and posts without reading the connection, once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getConnection, openConnection } from '../../../lambdas/domain/realtime/lifecycle';
import { sendWelcome } from '../../../lambdas/domain/realtime/welcome';
import { envNames } from '../../../lib/wiring';
import { apiGatewayId } from '../../../local/gateway/ids';
import { type LiveConnectionsEndpoint, startLiveConnectionsEndpoint } from '../../../local/metering';
import { useDynamoDbLocal } from '../../support/dynamodb';
import { userPrincipal } from '../../support/tokens';

const user = userPrincipal;

describe('the welcome worker, on DynamoDB Local', () => {
  useDynamoDbLocal();
  const posts: string[] = [];
  let endpoint: LiveConnectionsEndpoint | undefined;

  beforeAll(async () => {
    endpoint = await startLiveConnectionsEndpoint((call, connectionId) => {
      if (call === 'post') posts.push(connectionId);
    });
    process.env[envNames.wsCallbackUrl] = endpoint.url;
  });
  afterAll(async () => {
    await endpoint?.stop();
  });

  it('sends the session frame named by the message once, and never for a session the connection no longer has', async () => {
    const connectionId = apiGatewayId();
    const sessionId = await openConnection(connectionId, user('welcome-wes'));
    expect(sessionId).toEqual(expect.any(String));
    const request = { connection_id: connectionId, session_id: sessionId, user_id: 'welcome-wes' };
    // Another session's message (stale) claims nothing.
    await sendWelcome({ ...request, session_id: 'another-session' });
    expect(posts).toEqual([]);
    await sendWelcome(request);
    await sendWelcome(request);
    expect(posts).toEqual([connectionId]);
    expect(await getConnection(connectionId)).toMatchObject({ welcomed: true, session_id: sessionId });
  });

  it('reads the connection for a message without the session (queued before $connect named it)', async () => {
    const connectionId = apiGatewayId();
    await openConnection(connectionId, user('welcome-wyn'));
    posts.length = 0;
    await sendWelcome({ connection_id: connectionId });
    await sendWelcome({ connection_id: connectionId });
    expect(posts).toEqual([connectionId]);
    // An unauthenticated connection has no session to announce.
    const anonymous = apiGatewayId();
    await openConnection(anonymous);
    await sendWelcome({ connection_id: anonymous });
    expect(posts).toEqual([connectionId]);
  });
});
