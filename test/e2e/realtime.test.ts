import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { documentClient } from '../../lambdas/core/clients';
import { INLINE_AUDIENCE } from '../../lambdas/domain/realtime/broadcast';
import type { Authenticated } from '../../lambdas/domain/realtime/channels';
import { deliverToChannel, deliverToMembers, membersPage } from '../../lambdas/domain/realtime/deliver';
import type { NotificationFrame } from '../../lambdas/domain/realtime/frames';
import { closeConnection, endGoneConnections, getConnection } from '../../lambdas/domain/realtime/lifecycle';
import { ConnectionEndedError, resumeSession } from '../../lambdas/domain/realtime/sessions';
import { sweep } from '../../lambdas/domain/realtime/sweeper';
import { table } from '../../lambdas/domain/realtime/tables';
import { wiring } from '../../lib/wiring';
import { assertDocumentedResponse } from '../support/api-conformance';
import { endAndCleanUp } from '../support/disconnect';
import { LONG } from '../support/reliability';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { HandshakeError, TestClient } from '../support/ws-client';

/** Shortened deadlines (docs/realtime.md): the sweeper is run by the tests instead of waiting for its minute. */
const AUTH_TIMEOUT_SECS = 3;
/** The idle timeout of the one test about silence. */
const IDLE_TIMEOUT_SECS = 2;
/**
 * The idle timeout of every other test. The runtime's own sweeps still run (every 20 s from its first minute):
 * with 2 s for the whole file, one landing while a test's connection waited silently for 2 s (an auth
 * deadline, a token's expiry, a replay on a loaded machine) closed it as idle under the test.
 */
const QUIET_IDLE_TIMEOUT_SECS = 600;
/** The default `auth.clock_skew_secs`: tokens pass verification until `exp` + this. */
const CLOCK_SKEW_SECS = 30;
/**
 * Connections reached by one broadcast: more than a request delivers itself (INLINE_AUDIENCE), so it goes
 * through the queue; 500 in the long form (`npm run test:reliability`).
 */
const CROWD = LONG ? 500 : INLINE_AUDIENCE + 50;

let runtime: Runtime;
const open: TestClient[] = [];

beforeAll(async () => {
  runtime = await startTestRuntime({
    env: {
      NOTIFY_WS_AUTH_TIMEOUT_SECS: String(AUTH_TIMEOUT_SECS),
      NOTIFY_WS_IDLE_TIMEOUT_SECS: String(QUIET_IDLE_TIMEOUT_SECS),
    },
  });
}, 60_000);
afterAll(() => runtime?.stop());
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.close()));
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const connect = async (query = ''): Promise<TestClient> => {
  const client = await TestClient.open(`${runtime.wsUrl}${query}`);
  open.push(client);
  return client;
};

/** A connection authenticated with `?token=`, after its `session` frame. */
const connectAs = async (
  userId: string,
): Promise<{ client: TestClient; session: Record<string, unknown> }> => {
  const client = await connect(`?token=${await runtime.mintUserToken(userId)}`);
  const session = await client.nextOfType('session');
  return { client, session };
};

const notification = (id: string): NotificationFrame => ({
  type: 'notification',
  id,
  notification_id: id,
  event_type: 'test.event',
  source: 'tests',
  title: `title ${id}`,
  body: '',
  data: {},
  priority: 'normal',
  created_at: new Date().toISOString(),
  url: null,
  actions: [],
  category: null,
  tags: [],
  channel: 'realtime',
});

const api = async (path: string, token: string, init: RequestInit = {}) => {
  const response = await fetch(`${runtime.httpUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  });
  const text = await response.text();
  const method = init.method ?? 'GET';
  assertDocumentedResponse({ method, path, status: response.status, headers: response.headers, text });
  return { status: response.status, body: JSON.parse(text) as Record<string, unknown> };
};

describe('connecting', () => {
  it('with ?token= sends the session frame and subscribes user:<id>', async () => {
    const { client, session } = await connectAs('alice');
    expect(session).toMatchObject({ user_id: 'alice', heartbeat_interval_ms: 20_000 });
    expect(typeof session.session_id).toBe('string');
    const result = await deliverToChannel('user:alice', notification('n-1'));
    expect(result.delivered).toBe(1);
    expect(await client.nextOfType('notification')).toMatchObject({ id: 'n-1', title: 'title n-1' });
  });

  it('fails the handshake with 401 for an invalid token and 403 for a service token', async () => {
    await expect(TestClient.open(`${runtime.wsUrl}?token=not-a-jwt`)).rejects.toEqual(
      new HandshakeError(401),
    );
    const service = await runtime.mintServiceToken('billing', ['broadcast:write']);
    await expect(TestClient.open(`${runtime.wsUrl}?token=${service}`)).rejects.toEqual(
      new HandshakeError(403),
    );
  });

  it('without a token, authenticates with an auth frame and refuses other frames before it', async () => {
    const client = await connect();
    expect(await client.request({ type: 'subscribe', channel: 'room:a' })).toMatchObject({
      type: 'error',
      code: 'unauthorized',
    });
    expect(await client.request({ type: 'auth', token: 'garbage' })).toMatchObject({
      type: 'error',
      code: 'unauthorized',
    });
    const service = await runtime.mintServiceToken('billing', []);
    expect(await client.request({ type: 'auth', token: service })).toMatchObject({
      type: 'error',
      code: 'forbidden',
    });
    expect(await client.request({ type: 'auth', token: await runtime.mintUserToken('carol') })).toMatchObject(
      {
        type: 'ack',
        op: 'auth',
      },
    );
    expect(await client.nextOfType('session')).toMatchObject({ user_id: 'carol' });
    await deliverToChannel('user:carol', notification('n-carol'));
    expect(await client.nextOfType('notification')).toMatchObject({ id: 'n-carol' });
  });

  it('closes a connection that sends no auth frame in time, with an error frame first, by its own timer', async () => {
    // No sweep: the per-connection timer $connect arms (a delayed SQS message) must do it on its own.
    const client = await connect();
    const authed = await connect();
    expect(await authed.request({ type: 'auth', token: await runtime.mintUserToken('abe') })).toMatchObject({
      type: 'ack',
    });
    expect(await client.nextOfType('error')).toMatchObject({ code: 'unauthorized' });
    expect(await client.waitClosed()).toMatchObject({ code: 1000 });
    await sleep(1000);
    authed.send({ type: 'heartbeat' });
    expect(await authed.nextOfType('heartbeat.ack')).toEqual({ type: 'heartbeat.ack' });
    expect(authed.frames.filter((frame) => frame.type === 'error')).toEqual([]);
  });

  it('closes a connection whose token expires with token_expired, unless a fresh auth frame came first', async () => {
    // Accepted for 10 s more: `exp` is past, within the default clock skew (contract §5) by 10 s, room for a
    // loaded machine to connect with it (2 s, and a 3 s wait for it to run out, left little); the sweep below
    // runs as if after that instead.
    const acceptedForSecs = 10;
    const expiresInSecs = acceptedForSecs - CLOCK_SKEW_SECS;
    const expiring = await connect(`?token=${await runtime.mintUserToken('dave', { expiresInSecs })}`);
    await expiring.nextOfType('session');
    const refreshed = await connect(`?token=${await runtime.mintUserToken('dave', { expiresInSecs })}`);
    await refreshed.nextOfType('session');
    expect(
      await refreshed.request({ type: 'auth', token: await runtime.mintUserToken('dave') }),
    ).toMatchObject({
      type: 'ack',
      op: 'auth',
    });
    refreshed.send({ type: 'heartbeat' });
    await refreshed.nextOfType('heartbeat.ack');
    await sweep(Date.now() + (acceptedForSecs + 1) * 1000);
    expect(await expiring.nextOfType('error')).toMatchObject({ code: 'token_expired' });
    await expiring.waitClosed();
    expect(refreshed.closed).toBeUndefined();
  });

  it('keeps a connection whose token is past exp but within the clock skew auth accepted it with', async () => {
    // Contract §5: 30 s of skew. The token passes at $connect and in auth, so the sweeper must not close it.
    const late = await runtime.mintUserToken('della', { expiresInSecs: -5 });
    const connected = await connect(`?token=${late}`);
    await connected.nextOfType('session');
    const authed = await connect();
    expect(await authed.request({ type: 'auth', token: late })).toMatchObject({ type: 'ack', op: 'auth' });
    // Not silent either: only the token could make the sweep close them.
    for (const client of [connected, authed]) {
      client.send({ type: 'heartbeat' });
      await client.nextOfType('heartbeat.ack');
    }
    await sweep();
    for (const client of [connected, authed]) {
      client.send({ type: 'heartbeat' });
      expect(await client.nextOfType('heartbeat.ack')).toEqual({ type: 'heartbeat.ack' });
      expect(client.frames.filter((frame) => frame.type === 'error')).toEqual([]);
      expect(client.closed).toBeUndefined();
    }
  });
});

describe('frames', () => {
  it('answers invalid JSON, unknown types and missing fields with validation errors carrying the id', async () => {
    const { client } = await connectAs('erin');
    client.send('{not json');
    expect(await client.nextOfType('error')).toMatchObject({ code: 'validation' });
    expect(await client.request({ type: 'dance' })).toMatchObject({ type: 'error', code: 'validation' });
    expect(await client.request({ type: 'subscribe' })).toMatchObject({ type: 'error', code: 'validation' });
    expect(await client.request({ type: 'presence.update', status: 'sleeping' })).toMatchObject({
      type: 'error',
      code: 'validation',
    });
    expect(client.closed).toBeUndefined();
  });

  it('answers a fragmented message over 32 KiB with payload_too_large and closes a single big frame with 1009', async () => {
    const { client } = await connectAs('erin');
    const big = JSON.stringify({ type: 'subscribe', id: 'big', channel: `room:${'x'.repeat(40 * 1024)}` });
    client.sendFragmented(big);
    expect(await client.next((frame) => frame.id === 'big')).toMatchObject({
      type: 'error',
      code: 'payload_too_large',
    });
    client.send(big);
    expect((await client.waitClosed()).code).toBe(1009);
  });

  it('applies the channel rules', async () => {
    const { client } = await connectAs('frank');
    expect(await client.request({ type: 'subscribe', channel: 'user:someone-else' })).toMatchObject({
      type: 'error',
      code: 'forbidden',
    });
    expect(await client.request({ type: 'subscribe', channel: 'user:frank' })).toMatchObject({
      type: 'ack',
      op: 'subscribe',
    });
    expect(await client.request({ type: 'subscribe', channel: 'room:lobby' })).toMatchObject({
      type: 'ack',
      op: 'subscribe',
    });
    expect(await client.request({ type: 'subscribe', channel: 'chat:1' })).toMatchObject({
      type: 'error',
      code: 'validation',
    });
    await deliverToChannel('room:lobby', { type: 'custom', n: 1 });
    expect(await client.nextOfType('custom')).toMatchObject({ n: 1 });
    expect(await client.request({ type: 'unsubscribe', channel: 'room:lobby' })).toMatchObject({
      type: 'ack',
      op: 'unsubscribe',
    });
    expect(await deliverToChannel('room:lobby', { type: 'custom', n: 2 })).toEqual({
      delivered: 0,
      gone: [],
    });
  });

  it.skipIf(!wiring.tables.some((spec) => spec.id === 'topics'))(
    'refuses a topic that does not exist',
    async () => {
      const { client } = await connectAs('frank');
      expect(await client.request({ type: 'join.topic', topic: 'no.such.topic' })).toMatchObject({
        type: 'error',
        code: 'not_found',
      });
    },
  );
});

describe('heartbeat and silence', () => {
  it('answers heartbeat with heartbeat.ack, which carries no id (the gateway answers it: docs/realtime.md)', async () => {
    const { client } = await connectAs('gina');
    client.send({ type: 'heartbeat', id: 'hb-1' });
    expect(await client.nextOfType('heartbeat.ack')).toEqual({ type: 'heartbeat.ack' });
  });

  it('closes a silent connection after an idle_timeout error frame and cleans up its memberships and presence, keeping a live one', async () => {
    // Set before the connections authenticate: each one's first check is due an idle timeout after that.
    process.env.NOTIFY_WS_IDLE_TIMEOUT_SECS = String(IDLE_TIMEOUT_SECS);
    onTestFinished(() => {
      process.env.NOTIFY_WS_IDLE_TIMEOUT_SECS = String(QUIET_IDLE_TIMEOUT_SECS);
    });
    const silent = await connectAs('hank');
    const lively = await connectAs('ivy');
    await silent.client.request({ type: 'join.room', room_id: 'quiet' });
    const deadline = Date.now() + IDLE_TIMEOUT_SECS * 1000 + 1100;
    while (Date.now() < deadline) {
      lively.client.send({ type: 'heartbeat' });
      await lively.client.nextOfType('heartbeat.ack');
      await sleep(300);
    }
    await sweep();
    // Contract §4: the close code cannot say why (API Gateway closes with 1000), the error frame before it does.
    expect(await silent.client.nextOfType('error')).toMatchObject({ code: 'idle_timeout' });
    expect(await silent.client.waitClosed()).toMatchObject({ code: 1000 });
    expect(lively.client.closed).toBeUndefined();
    expect(await deliverToChannel('room:quiet', { type: 'custom' })).toMatchObject({ delivered: 0 });
    const token = await runtime.mintUserToken('observer');
    expect((await api('/presence/hank', token)).body).toMatchObject({ status: 'offline', connections: 0 });
    expect((await api('/presence?scope=room:quiet', token)).body).toEqual({
      scope: 'room:quiet',
      members: [],
      next_cursor: null,
    });
    expect((await api('/presence/ivy', token)).body).toMatchObject({ status: 'online', connections: 1 });
  });
});

describe('presence', () => {
  it('shows two users in a room each other’s joins, updates and leaves', async () => {
    const alice = await connectAs('p-alice');
    const bob = await connectAs('p-bob');
    expect(await alice.client.request({ type: 'join.room', room_id: 'r1' })).toMatchObject({
      type: 'ack',
      op: 'join.room',
    });
    expect(await bob.client.request({ type: 'join.room', room_id: 'r1' })).toMatchObject({
      type: 'ack',
      op: 'join.room',
    });
    expect(
      await alice.client.next((frame) => frame.type === 'presence' && frame.user_id === 'p-bob'),
    ).toMatchObject({ scope: 'room:r1', status: 'online', change: 'join' });
    expect(await bob.client.request({ type: 'presence.update', status: 'busy' })).toMatchObject({
      type: 'ack',
    });
    expect(
      await alice.client.next((frame) => frame.type === 'presence' && frame.user_id === 'p-bob'),
    ).toMatchObject({ status: 'busy', change: 'update' });
    expect(await alice.client.request({ type: 'presence.update', status: 'away' })).toMatchObject({
      type: 'ack',
    });
    expect(
      await bob.client.next(
        (frame) => frame.type === 'presence' && frame.user_id === 'p-alice' && frame.change === 'update',
      ),
    ).toMatchObject({ status: 'away' });

    const token = await runtime.mintServiceToken('dashboard', []);
    expect((await api('/presence?scope=room:r1', token)).body).toMatchObject({
      scope: 'room:r1',
      members: [
        { user_id: 'p-alice', status: 'away' },
        { user_id: 'p-bob', status: 'busy' },
      ],
    });
    // A page of one member at a time (a large room is paged; docs/realtime.md), and a cursor of another room refused.
    const first = await api('/presence?scope=room:r1&limit=1', token);
    expect(first.body).toMatchObject({ members: [{ user_id: 'p-alice' }], next_cursor: expect.any(String) });
    const cursor = encodeURIComponent(String(first.body.next_cursor));
    expect((await api(`/presence?scope=room:r1&limit=1&cursor=${cursor}`, token)).body).toMatchObject({
      members: [{ user_id: 'p-bob', status: 'busy' }],
    });
    const foreign = await api(`/presence?scope=room:r2&cursor=${cursor}`, token);
    expect(foreign.status).toBe(400);
    expect(foreign.body).toMatchObject({ code: 'validation', details: [{ field: 'cursor' }] });
    expect((await api('/presence/p-bob', token)).body).toMatchObject({
      user_id: 'p-bob',
      status: 'busy',
      connections: 1,
    });

    await endAndCleanUp(bob.client, {
      userId: 'p-bob',
      sessionId: bob.session.session_id as string,
      keepAlive: [alice.client],
    });
    expect(
      await alice.client.next(
        (frame) => frame.type === 'presence' && frame.user_id === 'p-bob' && frame.change === 'leave',
      ),
    ).toMatchObject({ status: 'offline' });
    const bobNow = (await api('/presence/p-bob', token)).body;
    expect(bobNow).toMatchObject({ status: 'offline', connections: 0 });
    expect(typeof bobNow.last_seen_at).toBe('string');
  });

  it('aggregates a user’s status over its connections', async () => {
    const first = await connectAs('multi');
    const second = await connectAs('multi');
    await first.client.request({ type: 'presence.update', status: 'away' });
    const token = await runtime.mintUserToken('observer');
    expect((await api('/presence/multi', token)).body).toMatchObject({ status: 'online', connections: 2 });
    await second.client.request({ type: 'presence.update', status: 'away' });
    expect((await api('/presence/multi', token)).body).toMatchObject({ status: 'away', connections: 2 });
    expect((await api('/presence?scope=lobby', token)).status).toBe(400);
  });
});

describe('reconnect', () => {
  it('restores channels and rooms and replays, in order, what was missed', async () => {
    const first = await connectAs('rita');
    await first.client.request({ type: 'join.room', room_id: 'replay' });
    await first.client.request({ type: 'subscribe', channel: 'room:news' });
    const sessionId = first.session.session_id as string;
    await endAndCleanUp(first.client, { userId: 'rita', sessionId });
    await deliverToChannel('room:news', { type: 'custom', seq: 1 });
    await deliverToChannel('user:rita', notification('missed-1'));
    await deliverToChannel('room:news', { type: 'custom', seq: 2 });

    const second = await connectAs('rita');
    const ack = await second.client.request({ type: 'reconnect', session_id: sessionId });
    expect(ack).toMatchObject({ type: 'ack', op: 'reconnect', replayed: 3 });
    const replayed = [
      await second.client.next((frame) => frame.type === 'custom' || frame.type === 'notification'),
      await second.client.next((frame) => frame.type === 'custom' || frame.type === 'notification'),
      await second.client.next((frame) => frame.type === 'custom' || frame.type === 'notification'),
    ];
    expect(replayed.map((frame) => frame.seq ?? frame.id)).toEqual([1, 'missed-1', 2]);
    expect(await deliverToChannel('room:news', { type: 'custom', seq: 3 })).toMatchObject({ delivered: 1 });
    expect(await second.client.nextOfType('custom')).toMatchObject({ seq: 3 });
    const token = await runtime.mintUserToken('observer');
    expect((await api('/presence?scope=room:replay', token)).body).toMatchObject({
      members: [{ user_id: 'rita' }],
    });
  });

  it('replays a frame whose fan-out read the detached membership before the resume and wrote after it', async () => {
    const first = await connectAs('rosa');
    await first.client.request({ type: 'subscribe', channel: 'room:late' });
    await endAndCleanUp(first.client, { userId: 'rosa', sessionId: first.session.session_id as string });
    // A fan-out reads the membership while the session is detached...
    const stale = await membersPage('room:late');
    expect(stale.members).toMatchObject([{ detached: true }]);
    // ...the resume runs to its end (nothing to replay yet)...
    const second = await connectAs('rosa');
    expect(
      await second.client.request({ type: 'reconnect', session_id: first.session.session_id }),
    ).toMatchObject({ type: 'ack', op: 'reconnect', replayed: 0 });
    // ...and only then does the fan-out deliver from what it read: the frame must still reach the session.
    await deliverToMembers(stale.members, { type: 'custom', seq: 'late' });
    expect(await second.client.nextOfType('custom')).toMatchObject({ seq: 'late' });
  });

  it('sends a frame once to a resuming connection that the fan-out also found by its own membership', async () => {
    const first = await connectAs('rory');
    await endAndCleanUp(first.client, { userId: 'rory', sessionId: first.session.session_id as string });
    const second = await connectAs('rory');
    // A fan-out reads the user's channel: the new connection's own row and the detached session's...
    const stale = await membersPage('user:rory');
    expect(stale.members.map((member) => member.detached === true).sort()).toEqual([false, true]);
    // ...the new connection resumes that session, then the fan-out delivers from what it read.
    expect(
      await second.client.request({ type: 'reconnect', session_id: first.session.session_id }),
    ).toMatchObject({ type: 'ack', op: 'reconnect' });
    await deliverToMembers(stale.members, { type: 'custom', seq: 'once' });
    await deliverToChannel('user:rory', { type: 'custom', seq: 'marker' });
    await second.client.next((frame) => frame.seq === 'marker');
    expect(second.client.frames.filter((frame) => frame.seq === 'once')).toHaveLength(1);
  });

  it('keeps the session resumable when the resuming connection is closed during the resume', async () => {
    const first = await connectAs('rhea');
    await first.client.request({ type: 'subscribe', channel: 'room:swept' });
    await endAndCleanUp(first.client, { userId: 'rhea', sessionId: first.session.session_id as string });
    const second = await connectAs('rhea');
    const { members } = await membersPage('user:rhea');
    const row = members.find((member) => member.session_id === second.session.session_id);
    const resuming = (await getConnection(row?.connection_id ?? '')) as Authenticated;
    // The sweeper closes the resuming connection after its frame handler has read it.
    await closeConnection(resuming.connection_id, 'idle');
    await expect(
      resumeSession(
        resuming,
        first.session.session_id as string,
        async () => {},
        async () => {},
      ),
    ).rejects.toBeInstanceOf(ConnectionEndedError);
    await deliverToChannel('room:swept', { type: 'custom', seq: 'after' });
    const third = await connectAs('rhea');
    expect(
      await third.client.request({ type: 'reconnect', session_id: first.session.session_id }),
    ).toMatchObject({ type: 'ack', op: 'reconnect', replayed: 1 });
    expect(await third.client.nextOfType('custom')).toMatchObject({ seq: 'after' });
  });

  it('keeps every broadcast to a dropped member’s room and user channel, and the newest 100 of 105', async () => {
    const service = await runtime.mintServiceToken('ops', ['broadcast:write']);
    const broadcast = (channel: string, seq: number) =>
      api('/broadcast', service, {
        method: 'POST',
        body: JSON.stringify({ channel, payload: { type: 'custom', seq } }),
      });
    const first = await connectAs('wren');
    await first.client.request({ type: 'join.room', room_id: 'dropped' });
    // Gone without a close handshake, as when a network drops: the room's only member is a detached session.
    await endAndCleanUp(first.client, {
      userId: 'wren',
      sessionId: first.session.session_id as string,
      drop: true,
    });
    for (let seq = 0; seq < 4; seq++) {
      expect(await broadcast(seq % 2 === 0 ? 'room:dropped' : 'user:wren', seq)).toEqual({
        status: 202,
        body: { recipients: 1 },
      });
    }
    const second = await connectAs('wren');
    expect(
      await second.client.request({ type: 'reconnect', session_id: first.session.session_id }),
    ).toMatchObject({ type: 'ack', op: 'reconnect', replayed: 4 });
    const replayed = [];
    for (let index = 0; index < 4; index++) replayed.push((await second.client.nextOfType('custom')).seq);
    expect(replayed).toEqual([0, 1, 2, 3]);

    // The second connection carries the resumed session now, not the one it opened with.
    await endAndCleanUp(second.client, {
      userId: 'wren',
      sessionId: first.session.session_id as string,
      drop: true,
    });
    for (let seq = 0; seq < 105; seq++) await broadcast('room:dropped', seq);
    const third = await connectAs('wren');
    expect(
      // The resumed session lives on (the reconnect ack named it), not the second connection's fresh one.
      await third.client.request({ type: 'reconnect', session_id: first.session.session_id }),
    ).toMatchObject({ type: 'ack', op: 'reconnect', replayed: 100 });
    const newest = [];
    for (let index = 0; index < 100; index++) newest.push((await third.client.nextOfType('custom')).seq);
    expect(newest).toEqual(Array.from({ length: 100 }, (_, index) => index + 5));
  }, 120_000);

  it('replays a notification kept twice for a dropped session once, and counts it once', async () => {
    const first = await connectAs('dora');
    await endAndCleanUp(first.client, {
      userId: 'dora',
      sessionId: first.session.session_id as string,
      drop: true,
    });
    // Two copies of one fan-out message (SQS may hand out a message twice at once) both keep the frame.
    await deliverToChannel('user:dora', notification('one'));
    await deliverToChannel('user:dora', notification('one'));
    await deliverToChannel('user:dora', notification('two'));
    const second = await connectAs('dora');
    expect(
      await second.client.request({ type: 'reconnect', session_id: first.session.session_id }),
    ).toMatchObject({ type: 'ack', op: 'reconnect', replayed: 2 });
    expect((await second.client.nextOfType('notification')).id).toBe('one');
    expect((await second.client.nextOfType('notification')).id).toBe('two');
    await expect(second.client.nextOfType('notification', 500)).rejects.toThrow();
  });

  it('replays the newest 100 distinct frames, and never again one that fell out of an earlier replay', async () => {
    // Found by a user probe: copies of one frame counted towards the 100 (fewer replayed, newer ones missing),
    // and the frames older than the newest 100 stayed buffered and came back at the next reconnect.
    const first = await connectAs('otto');
    const sessionId = first.session.session_id as string;
    await endAndCleanUp(first.client, { userId: 'otto', sessionId, drop: true });
    for (let index = 0; index < 103; index++) await deliverToChannel('user:otto', notification(`n-${index}`));
    // The newest ten kept twice (two copies of one fan-out message handed out at once).
    for (let index = 93; index < 103; index++)
      await deliverToChannel('user:otto', notification(`n-${index}`));
    const second = await connectAs('otto');
    expect(await second.client.request({ type: 'reconnect', session_id: sessionId })).toMatchObject({
      replayed: 100,
    });
    const replayed = [];
    for (let index = 0; index < 100; index++)
      replayed.push((await second.client.nextOfType('notification')).id);
    expect(replayed).toEqual(Array.from({ length: 100 }, (_, index) => `n-${index + 3}`));

    await endAndCleanUp(second.client, { userId: 'otto', sessionId, drop: true });
    await deliverToChannel('user:otto', notification('after'));
    const third = await connectAs('otto');
    expect(await third.client.request({ type: 'reconnect', session_id: sessionId })).toMatchObject({
      replayed: 1,
    });
    expect((await third.client.nextOfType('notification')).id).toBe('after');
    await expect(third.client.nextOfType('notification', 500)).rejects.toThrow();
  }, 120_000);

  it('replays a frame kept twice at the place of its first copy (found by a review)', async () => {
    const first = await connectAs('ursa');
    const sessionId = first.session.session_id as string;
    await endAndCleanUp(first.client, { userId: 'ursa', sessionId, drop: true });
    await deliverToChannel('user:ursa', notification('twice'));
    await deliverToChannel('user:ursa', { type: 'custom', seq: 'between' });
    await deliverToChannel('user:ursa', notification('twice'));
    const second = await connectAs('ursa');
    expect(await second.client.request({ type: 'reconnect', session_id: sessionId })).toMatchObject({
      replayed: 2,
    });
    const replayed = [
      await second.client.next((frame) => frame.type === 'custom' || frame.type === 'notification'),
      await second.client.next((frame) => frame.type === 'custom' || frame.type === 'notification'),
    ];
    expect(replayed.map((frame) => frame.seq ?? frame.id)).toEqual(['twice', 'between']);
  });

  it('answers session_expired for an unknown, foreign or expired session', async () => {
    const owner = await connectAs('sam');
    const other = await connectAs('tom');
    expect(
      await other.client.request({ type: 'reconnect', session_id: owner.session.session_id }),
    ).toMatchObject({
      type: 'error',
      code: 'session_expired',
    });
    expect(await other.client.request({ type: 'reconnect', session_id: 'no-such-session' })).toMatchObject({
      type: 'error',
      code: 'session_expired',
    });
    process.env.NOTIFY_WS_SESSION_TTL_SECS = '1';
    try {
      await endAndCleanUp(owner.client, { userId: 'sam', sessionId: owner.session.session_id as string });
      await sleep(2100);
    } finally {
      delete process.env.NOTIFY_WS_SESSION_TTL_SECS;
    }
    const again = await connectAs('sam');
    expect(
      await again.client.request({ type: 'reconnect', session_id: owner.session.session_id }),
    ).toMatchObject({
      type: 'error',
      code: 'session_expired',
    });
  });
});

describe('delivery', () => {
  it('reports a vanished connection (410) without failing; ended by the caller, its orphaned membership goes', async () => {
    const { client, session } = await connectAs('uma');
    await client.request({ type: 'subscribe', channel: 'room:stale' });
    // A membership whose connection API Gateway no longer knows, as when $disconnect never arrived.
    await documentClient().send(
      new PutCommand({
        TableName: table('channels'),
        Item: {
          channel: 'room:stale',
          connection_id: 'vanished-connection',
          user_id: 'uma',
          session_id: 'vanished-session',
          ttl: Math.floor(Date.now() / 1000) + 3600,
        },
      }),
    );
    const first = await deliverToChannel('room:stale', { type: 'custom' });
    expect(first).toEqual({
      delivered: 1,
      gone: [{ connection_id: 'vanished-connection', channel: 'room:stale' }],
    });
    // Reported only: delivery leaves ending connections to its caller.
    expect((await deliverToChannel('room:stale', { type: 'custom' })).gone).toHaveLength(1);
    await endGoneConnections(first.gone);
    expect(await deliverToChannel('room:stale', { type: 'custom' })).toEqual({ delivered: 1, gone: [] });
    expect(session.user_id).toBe('uma');
  });
});

describe('broadcast', () => {
  it('is for broadcast:write services and admins, to a channel', async () => {
    const { client } = await connectAs('vic');
    await client.request({ type: 'join.room', room_id: 'stage' });
    const service = await runtime.mintServiceToken('ops', ['broadcast:write']);
    const post = (token: string, body: unknown) =>
      api('/broadcast', token, { method: 'POST', body: JSON.stringify(body) });
    expect((await post(await runtime.mintUserToken('vic'), { payload: { type: 'x' } })).status).toBe(403);
    expect((await post(await runtime.mintServiceToken('ops', []), { payload: { type: 'x' } })).status).toBe(
      403,
    );
    expect((await post(service, { channel: 'room:stage', payload: { kind: 'no type' } })).status).toBe(400);
    // A protocol frame's type would be read as one (an `error` announces a close to the SDK): refused.
    for (const type of ['error', 'session', 'notification', 'heartbeat.ack', 'presence.summary']) {
      const reserved = await post(service, {
        channel: 'room:stage',
        payload: { type, code: 'idle_timeout' },
      });
      expect(reserved.status).toBe(400);
      expect(reserved.body.details).toContainEqual({
        field: 'payload.type',
        issue: expect.stringContaining(type),
      });
    }
    const sent = await post(service, {
      channel: 'room:stage',
      payload: { type: 'announcement', text: 'hi' },
    });
    expect(sent).toEqual({ status: 202, body: { recipients: 1 } });
    expect(await client.nextOfType('announcement')).toEqual({ type: 'announcement', text: 'hi' });
    const admin = await runtime.mintUserToken('root', { roles: ['admin'] });
    expect((await post(admin, { channel: 'room:empty', payload: { type: 'x' } })).body).toEqual({
      recipients: 0,
    });
  });

  it(`reaches every one of ${CROWD} concurrent connections`, async () => {
    // These clients stay silent: the runtime's own sweeps leave them alone (QUIET_IDLE_TIMEOUT_SECS).
    const clients: TestClient[] = [];
    for (let batch = 0; batch < CROWD / 50; batch++) {
      const opened = await Promise.all(
        Array.from({ length: 50 }, async (_, index) => {
          const client = await connect(`?token=${await runtime.mintUserToken(`crowd-${batch}-${index}`)}`);
          await client.nextOfType('session', 30_000);
          return client;
        }),
      );
      clients.push(...opened);
    }
    const service = await runtime.mintServiceToken('ops', ['broadcast:write']);
    const sent = await api('/broadcast', service, {
      method: 'POST',
      body: JSON.stringify({ payload: { type: 'maintenance', at: 'now' } }),
    });
    expect(sent.status).toBe(202);
    expect(sent.body.recipients).toBeGreaterThanOrEqual(CROWD);
    const received = await Promise.all(clients.map((client) => client.nextOfType('maintenance', 60_000)));
    expect(received).toHaveLength(CROWD);
  }, 120_000);
});
