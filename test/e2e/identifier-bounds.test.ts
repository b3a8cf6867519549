/**
 * Every identifier the service takes has one bound, in UTF-8 bytes (lambdas/core/identifiers.ts, contract §5):
 * at the bound it works end to end, past it the answer is a 400, a 401 for a token subject or service name, or
 * a WebSocket error frame, never a 500 or `internal`. Over real HTTP and WebSocket on the local runtime.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushSettingName } from '../../common/env';
import { IDENTIFIER_BYTES } from '../../lambdas/core/identifiers';
import { apiClient, eventually } from '../support/api';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { HandshakeError, TestClient } from '../support/ws-client';

let runtime: Runtime;
const api = apiClient(() => runtime.httpUrl);
/** Every connection the tests open, closed before the runtime stops. */
const open: TestClient[] = [];

beforeAll(async () => {
  // An app id in right-to-left letters, configured for push (registration accepts configured apps only).
  runtime = await startTestRuntime({
    env: { [pushSettingName('APPS')]: JSON.stringify({ تطبيق: { fcm: { credentials: {} } } }) },
  });
}, 60_000);
afterAll(async () => {
  await Promise.all(open.map((client) => client.close()));
  await runtime?.stop();
});

/** `bytes` UTF-8 bytes of 4-byte characters (emoji), starting with `tag` (ASCII) to keep tests apart. */
const emojiOf = (tag: string, bytes: number): string => {
  const rest = bytes - tag.length;
  return `${tag}${'x'.repeat(rest % 4)}${'😀'.repeat(Math.floor(rest / 4))}`;
};

const handshakeStatus = async (token: string): Promise<number> => {
  try {
    const client = await TestClient.open(`${runtime.wsUrl}?token=${token}`);
    open.push(client);
    return 101;
  } catch (error) {
    if (error instanceof HandshakeError) return error.status;
    throw error;
  }
};

const connectAs = async (userId: string): Promise<TestClient> => {
  const client = await TestClient.open(`${runtime.wsUrl}?token=${await runtime.mintUserToken(userId)}`);
  open.push(client);
  await client.nextOfType('session');
  return client;
};

describe('token subjects and service names', () => {
  it('past the bound are a 401 on every route and on the WebSocket handshake (they were 500s)', async () => {
    const tooLong = await runtime.mintUserToken('s'.repeat(2_100));
    const overByOne = await runtime.mintUserToken(emojiOf('o', IDENTIFIER_BYTES.userId + 1));
    for (const token of [tooLong, overByOne]) {
      for (const [method, path, body] of [
        ['GET', '/notifications', undefined],
        ['GET', '/notifications/unread-count', undefined],
        ['PUT', '/preferences', { rules: [] }],
        ['POST', '/devices', { token: 'device-1', platform: 'android' }],
      ] as const) {
        const response = await api(method, path, token, body);
        expect(response, `${method} ${path}`).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
      }
      expect(await handshakeStatus(token)).toBe(401);
      const client = await TestClient.open(runtime.wsUrl);
      open.push(client);
      expect(await client.request({ type: 'auth', token })).toMatchObject({
        type: 'error',
        code: 'unauthorized',
      });
    }
    const longService = await runtime.mintServiceToken(emojiOf('svc', IDENTIFIER_BYTES.serviceName + 1), [
      'notifications:write',
    ]);
    const refused = await api('POST', '/notifications', longService, {
      event_type: 'bounds.test',
      title: 'x',
      recipient_ids: ['bounds-user'],
    });
    expect(refused).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
  });

  it('that break the text policy for names are a 401 on every route, the handshake and the auth frame', async () => {
    // A user id is a name (a recipient id, a key, a log field): the characters refused in recipient ids are
    // refused in the token that brings it. An unpaired surrogate would be stored as U+FFFD, one user for many.
    for (const sub of ['\ud800x', 'line\nbreak', 'nul\u0000', 'bidi\u202eevil', 'esc\u001b[31m']) {
      const token = await runtime.mintUserToken(sub);
      for (const [method, path, body] of [
        ['GET', '/notifications', undefined],
        ['PUT', '/preferences', { rules: [] }],
      ] as const) {
        const response = await api(method, path, token, body);
        expect(response, `${JSON.stringify(sub)} ${method} ${path}`).toMatchObject({
          status: 401,
          body: { code: 'unauthorized' },
        });
      }
      expect(await handshakeStatus(token), JSON.stringify(sub)).toBe(401);
      const client = await TestClient.open(runtime.wsUrl);
      open.push(client);
      expect(await client.request({ type: 'auth', token })).toMatchObject({
        type: 'error',
        code: 'unauthorized',
      });
    }
    for (const service of ['\ud800svc', 'svc\nforged', 'svc\u202e', 'svc\u0000']) {
      const writer = await runtime.mintServiceToken(service, ['notifications:write']);
      const refused = await api('POST', '/notifications', writer, {
        event_type: 'bounds.test',
        title: 'x',
        recipient_ids: ['bounds-user'],
      });
      expect(refused, JSON.stringify(service)).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    }
  });

  it('at the bound, in 4-byte characters, work on every route, the handshake and join.room (it was `internal`)', async () => {
    const userId = emojiOf('at', IDENTIFIER_BYTES.userId);
    const token = await runtime.mintUserToken(userId);
    expect((await api('GET', '/notifications', token)).status).toBe(200);
    expect((await api('GET', '/notifications/unread-count', token)).status).toBe(200);
    expect((await api('PUT', '/preferences', token, { rules: [] })).status).toBe(200);
    expect((await api('POST', '/devices', token, { token: 'device-at', platform: 'android' })).status).toBe(
      201,
    );
    const client = await connectAs(userId);
    const roomId = emojiOf('r', IDENTIFIER_BYTES.channelName);
    expect(await client.request({ type: 'join.room', room_id: roomId })).toMatchObject({ type: 'ack' });
    const presence = await api('GET', `/presence?scope=${encodeURIComponent(`room:${roomId}`)}`, token);
    expect(presence).toMatchObject({
      status: 200,
      body: { members: [{ user_id: userId, status: 'online' }] },
    });

    const service = emojiOf('s', IDENTIFIER_BYTES.serviceName);
    const writer = await runtime.mintServiceToken(service, ['notifications:write']);
    const sent = await api('POST', '/notifications', writer, {
      event_type: 'bounds.test',
      title: 'at the bound',
      recipient_ids: [userId],
    });
    expect(sent.status).toBe(202);
    const feed = await eventually(
      () => api('GET', '/notifications', token),
      (response) => response.body?.items?.length === 1,
    );
    expect(feed.body.items[0]).toMatchObject({ source: service, title: 'at the bound' });
  });
});

describe('identifiers in requests', () => {
  it('past the bound are a 400 naming the field, and a validation error frame on the WebSocket', async () => {
    const overUser = emojiOf('u', IDENTIFIER_BYTES.userId + 1);
    const overRoom = emojiOf('r', IDENTIFIER_BYTES.channelName + 1);
    const writer = await runtime.mintServiceToken('bounds', ['notifications:write', 'broadcast:write']);
    const user = await runtime.mintUserToken('bounds-user');
    await api('POST', '/topics', writer, { name: 'bounds-topic' });
    for (const [method, path, token, body, field] of [
      [
        'POST',
        '/notifications',
        writer,
        { event_type: 'bounds.test', title: 'x', recipient_ids: ['ok', overUser] },
        'recipient_ids[1]',
      ],
      ['POST', '/subscriptions', writer, { topic: 'bounds-topic', user_id: overUser }, 'user_id'],
      ['POST', '/broadcast', writer, { channel: `room:${overRoom}`, payload: { type: 'x' } }, 'channel'],
      ['GET', `/preferences?user_id=${encodeURIComponent(overUser)}`, writer, undefined, 'user_id'],
      ['GET', `/presence?scope=${encodeURIComponent(`room:${overRoom}`)}`, user, undefined, 'scope'],
      ['GET', `/presence/${encodeURIComponent(overUser)}`, user, undefined, 'user_id'],
    ] as const) {
      const response = await api(method, path, token, body);
      expect(response, `${method} ${path.slice(0, 40)}`).toMatchObject({
        status: 400,
        body: { code: 'validation', details: [{ field }] },
      });
    }

    const client = await connectAs('bounds-ws');
    for (const frame of [
      { type: 'join.room', room_id: overRoom },
      { type: 'subscribe', channel: `room:${overRoom}` },
      { type: 'unsubscribe', channel: `room:${overRoom}` },
      { type: 'join.topic', topic: emojiOf('t', IDENTIFIER_BYTES.channelName + 1) },
    ]) {
      expect(await client.request(frame), frame.type).toMatchObject({ type: 'error', code: 'validation' });
    }
  });

  it('that break the text policy for names are a 400 naming the field on every route that takes one', async () => {
    const writer = await runtime.mintServiceToken('names', ['notifications:write', 'broadcast:write']);
    const user = await runtime.mintUserToken('names-user');
    await api('POST', '/topics', writer, { name: 'names-topic' });
    for (const [method, path, token, body, field] of [
      ['GET', `/presence/${encodeURIComponent('forged\nline')}`, user, undefined, 'user_id'],
      ['GET', `/presence/${encodeURIComponent('bidi\u202eevil')}`, user, undefined, 'user_id'],
      ['GET', `/preferences?user_id=${encodeURIComponent('bidi\u202eevil')}`, writer, undefined, 'user_id'],
      ['POST', '/subscriptions', writer, { topic: 'names-topic', user_id: 'esc\u001b[31m' }, 'user_id'],
      ['POST', '/devices', user, { token: 'device\nforged', platform: 'android' }, 'token'],
      [
        'POST',
        '/devices',
        user,
        { token: 'device-ok', platform: 'android', app_id: 'app\u001b[31m' },
        'app_id',
      ],
      ['POST', '/devices', user, { token: 'device\u202e', platform: 'ios' }, 'token'],
      ['DELETE', '/devices', user, { token: 'device\nforged' }, 'token'],
      ['POST', '/broadcast', writer, { payload: { type: 'chat\u202e' } }, 'payload.type'],
      [
        'POST',
        '/broadcast',
        writer,
        { channel: 'room:names', payload: { type: 'chat\nforged' } },
        'payload.type',
      ],
    ] as const) {
      const response = await api(method, path, token, body);
      expect(response, `${method} ${path} ${JSON.stringify(body)}`).toMatchObject({
        status: 400,
        body: { code: 'validation', details: [{ field }] },
      });
    }
    // Text that is not a name keeps what names refuse: a device token with emoji and right-to-left letters works.
    const device = await api('POST', '/devices', user, {
      token: 'جهاز-😀',
      platform: 'android',
      app_id: 'تطبيق',
    });
    expect(device).toMatchObject({ status: 201, body: { token: 'جهاز-😀', app_id: 'تطبيق' } });
  });

  it('refuses a crafted presence cursor whose user is past the bound with 400 (it was a 500)', async () => {
    const user = await runtime.mintUserToken('bounds-cursor');
    const scope = 'room:bounds-cursor';
    const cursor = Buffer.from(JSON.stringify({ scope, after: 'a'.repeat(1_100) })).toString('base64url');
    const response = await api('GET', `/presence?scope=${scope}&cursor=${cursor}`, user);
    expect(response).toMatchObject({
      status: 400,
      body: { code: 'validation', details: [{ field: 'cursor' }] },
    });
  });
});
