/**
 * Presence in large rooms (docs/realtime.md): above `scale.presence.announce_max` subscribed connections a
 * room's changes are no longer posted to every member by the request; they are counted and announced as one
 * `presence.summary` per interval, through the broadcast queue. A small announce_max keeps the test small.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import {
  type BroadcastFrame,
  createNotify,
  type Notify,
  type PresenceSummaryFrame,
  type WebSocketConstructor,
} from '../../client/src/index';
import { envNames } from '../../common/env';
import { apiClient, eventually } from '../support/api';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { type Frame, TestClient } from '../support/ws-client';

const ANNOUNCE_MAX = 2;
const SUMMARY_SECS = 2;
const ROOM = 'room:stadium';

let runtime: Runtime;
const open: TestClient[] = [];
const sdks: Notify[] = [];
const api = apiClient(() => runtime.httpUrl);

beforeAll(async () => {
  runtime = await startTestRuntime({
    env: {
      [envNames.presenceAnnounceMax]: String(ANNOUNCE_MAX),
      [envNames.presenceSummarySecs]: String(SUMMARY_SECS),
    },
  });
}, 60_000);
afterAll(() => runtime?.stop());
afterEach(async () => {
  for (const notify of sdks.splice(0)) notify.realtime.disconnect();
  await Promise.all(open.splice(0).map((client) => client.close()));
});

const connectAs = async (userId: string): Promise<TestClient> => {
  const client = await TestClient.open(`${runtime.wsUrl}?token=${await runtime.mintUserToken(userId)}`);
  open.push(client);
  await client.nextOfType('session');
  return client;
};

const ack = (op: string) => expect.objectContaining({ type: 'ack', op });

/** Summary ids a client has seen: a repeat of one comes later, and a client drops it by id as the SDK does. */
const seenSummaries = new WeakMap<TestClient, Set<string>>();

/**
 * Takes `client`'s summaries until the changes they count reach `expected` (a summary delivered twice —
 * at-least-once delivery — carries the same id and is counted once, also when the repeat comes after a later
 * call). Returns the distinct summaries.
 */
const summariesCounting = async (
  client: TestClient,
  expected: { joined: number; left: number; updated: number },
): Promise<Frame[]> => {
  const seen = seenSummaries.get(client) ?? new Set<string>();
  seenSummaries.set(client, seen);
  const summaries = new Map<string, Frame>();
  const total = (key: 'joined' | 'left' | 'updated') =>
    [...summaries.values()].reduce((sum, summary) => sum + (summary[key] as number), 0);
  while (
    total('joined') < expected.joined ||
    total('left') < expected.left ||
    total('updated') < expected.updated
  ) {
    const summary = await client.nextOfType('presence.summary', 30_000);
    // A copy of an earlier summary's message (SQS at least once) sends it again under the same id.
    if (!seen.has(summary.id as string)) summaries.set(summary.id as string, summary);
  }
  for (const id of summaries.keys()) seen.add(id);
  expect({ joined: total('joined'), left: total('left'), updated: total('updated') }).toEqual(expected);
  return [...summaries.values()];
};

describe('presence in a room above scale.presence.announce_max', () => {
  it('announces each change while the room is small, then summaries instead of a frame per change', async () => {
    const alice = await connectAs('big-alice');
    const bob = await connectAs('big-bob');
    expect(await alice.request({ type: 'join.room', room_id: 'stadium' })).toEqual(ack('join.room'));
    expect(await bob.request({ type: 'join.room', room_id: 'stadium' })).toEqual(ack('join.room'));
    // Two subscribers: the contract's frame, from the request itself.
    expect(
      await alice.next((frame) => frame.type === 'presence' && frame.user_id === 'big-bob'),
    ).toMatchObject({ scope: ROOM, status: 'online', change: 'join' });

    // A third subscriber makes the room large: carol's join is counted, not posted to each member.
    const carol = await connectAs('big-carol');
    expect(await carol.request({ type: 'join.room', room_id: 'stadium' })).toEqual(ack('join.room'));
    const [first] = await summariesCounting(alice, { joined: 1, left: 0, updated: 0 });
    expect(first).toMatchObject({ type: 'presence.summary', scope: ROOM, members: 3 });
    expect(Date.parse(first?.at as string)).toBeGreaterThanOrEqual(Date.parse(first?.since as string));
    // Every subscriber gets it, the joiner too.
    for (const client of [bob, carol])
      expect(await client.nextOfType('presence.summary', 30_000)).toMatchObject({
        id: first?.id,
        members: 3,
      });

    // Several changes at once: a join, a status change and a leave, counted into the next summaries.
    const dave = await connectAs('big-dave');
    const answers = await Promise.all([
      dave.request({ type: 'join.room', room_id: 'stadium' }),
      bob.request({ type: 'presence.update', status: 'busy' }),
      carol.request({ type: 'unsubscribe', channel: ROOM }),
    ]);
    expect(answers).toEqual([ack('join.room'), ack('presence.update'), ack('unsubscribe')]);
    const later = await summariesCounting(alice, { joined: 1, left: 1, updated: 1 });
    expect(later.at(-1)).toMatchObject({ members: 3 });
    // The summary that follows another counts from where that one ended.
    expect(later[0]?.since).toBe(first?.at);

    // None of the changes in the large room reached alice as a per-member frame (her own join, in the small
    // room, did).
    expect(alice.frames.filter((frame) => frame.type === 'presence')).toEqual([
      expect.objectContaining({ user_id: 'big-alice', change: 'join' }),
    ]);
    // The member list itself is still exact.
    const token = await runtime.mintServiceToken('dashboard', []);
    const { body } = await api('GET', `/presence?scope=${ROOM}`, token);
    expect(body.members).toEqual([
      expect.objectContaining({ user_id: 'big-alice' }),
      expect.objectContaining({ user_id: 'big-bob', status: 'busy' }),
      expect.objectContaining({ user_id: 'big-dave' }),
    ]);
  }, 180_000);

  it('reaches an SDK app as presenceSummary events, each summary once', async () => {
    const notify = createNotify({
      apiUrl: runtime.httpUrl,
      wsUrl: runtime.wsUrl,
      // Node 20 has no global WebSocket.
      WebSocket: WebSocket as unknown as WebSocketConstructor,
      getToken: () => runtime.mintUserToken('sdk-fan'),
    });
    sdks.push(notify);
    const summaries: PresenceSummaryFrame[] = [];
    const broadcasts: BroadcastFrame[] = [];
    notify.realtime.on('presenceSummary', (frame) => summaries.push(frame));
    notify.realtime.on('broadcast', (frame) => broadcasts.push(frame));
    notify.realtime.connect();
    await notify.realtime.joinRoom('arena');
    for (const user of ['arena-1', 'arena-2']) {
      const client = await connectAs(user);
      expect(await client.request({ type: 'join.room', room_id: 'arena' })).toEqual(ack('join.room'));
    }
    // The second raw client's join is the third subscriber's: counted, then summarised.
    const seen = await eventually(
      () => summaries,
      (frames) => frames.length > 0,
      30_000,
    );
    expect(seen[0]).toMatchObject({ type: 'presence.summary', scope: 'room:arena', members: 3, joined: 1 });
    expect(new Set(summaries.map((frame) => frame.id)).size).toBe(summaries.length);
    expect(broadcasts).toEqual([]);
  }, 120_000);
});
