/**
 * Presence converges to a connection's last status whatever order its frames are handled in: `presence.update`
 * sent together with `join.room` (not waiting for the ack, as the client SDK's sync does on every new session)
 * must leave GET /presence/{user}, the room's member list and the room's last `presence` frame about the user
 * all saying the same status. Over real WebSockets on the local runtime (AWS-like delivery: frames of one
 * connection handled concurrently, in any order).
 */
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createNotify, type Notify } from '../../client/src/index';
import { eventually } from '../support/api';
import { LONG } from '../support/reliability';
import type { Frame, TestClient } from '../support/ws-client';
import { realtimeRuntime } from '../support/ws-runtime';

const REPETITIONS = LONG ? 40 : 10;
const STATUSES = ['busy', 'away'] as const;

const realtime = realtimeRuntime();
const { api, run } = realtime;

const connectAs = async (userId: string): Promise<TestClient> => (await realtime.connectAs(userId)).client;

/** Sends every frame at once (each with an id), then waits for all their answers. */
const sendTogether = async (client: TestClient, frames: readonly Record<string, unknown>[]) => {
  const ids = frames.map((frame, index) => {
    const id = `f-${index}-${Math.random().toString(36).slice(2)}`;
    client.send({ ...frame, id });
    return id;
  });
  return Promise.all(ids.map((id) => client.next((answer) => answer.id === id, 30_000)));
};

interface Views {
  readonly user: string;
  readonly rooms: readonly (string | undefined)[];
  readonly frames: readonly (string | undefined)[];
}

/** What each view says about the user's status: GET /presence/{user}, each room's list, each room's last frame. */
const views = async (observer: Frame[], userId: string, rooms: readonly string[]): Promise<Views> => {
  const token = await realtime.runtime.mintUserToken('presence-observer');
  const user = (await api('GET', `/presence/${encodeURIComponent(userId)}`, token)).body.status as string;
  const listed = await Promise.all(
    rooms.map(async (room) => {
      const { body } = await api('GET', `/presence?scope=${encodeURIComponent(`room:${room}`)}`, token);
      return (body.members as { user_id: string; status: string }[]).find(
        (member) => member.user_id === userId,
      )?.status;
    }),
  );
  const lastFrames = rooms.map(
    (room) =>
      observer.filter((frame) => frame.scope === `room:${room}` && frame.user_id === userId).at(-1)?.status as
        | string
        | undefined,
  );
  return { user, rooms: listed, frames: lastFrames };
};

const agreeOn = (status: string, rooms: number) => (seen: Views) =>
  seen.user === status &&
  seen.rooms.length === rooms &&
  seen.rooms.every((listed) => listed === status) &&
  seen.frames.every((framed) => framed === status);

/** An observer in the rooms, keeping every presence frame it gets (TestClient.next would take them out). */
const observe = async (rooms: readonly string[]): Promise<Frame[]> => {
  const observer = await connectAs(`observer-${run}`);
  for (const room of rooms) await sendTogether(observer, [{ type: 'join.room', room_id: room }]);
  const frames: Frame[] = [];
  observer.socket.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as Frame;
    if (frame.type === 'presence') frames.push(frame);
  });
  return frames;
};

describe('presence under frames handled in any order', () => {
  it(`converges to the status of a presence.update sent with join.room, ${REPETITIONS} times`, async () => {
    const diverged: string[] = [];
    for (let repetition = 0; repetition < REPETITIONS; repetition += 1) {
      const userId = `racer-${run}-${repetition}`;
      const rooms = [`race-a-${run}-${repetition}`, `race-b-${run}-${repetition}`];
      const status = STATUSES[repetition % STATUSES.length] as string;
      const observer = await observe(rooms);
      const client = await connectAs(userId);
      const update = { type: 'presence.update', status };
      const joins = rooms.map((room) => ({ type: 'join.room', room_id: room }));
      // Half the time the update first (as the SDK's sync sends them), half the time between the joins.
      const frames = repetition % 2 === 0 ? [update, ...joins] : [joins[0], update, joins[1]];
      const answers = await sendTogether(client, frames as Record<string, unknown>[]);
      expect(answers.map((answer) => answer.type)).toEqual(['ack', 'ack', 'ack']);
      const seen = await eventually(
        () => views(observer, userId, rooms),
        agreeOn(status, rooms.length),
        10_000,
      );
      if (!agreeOn(status, rooms.length)(seen))
        diverged.push(`${repetition} (${status}): ${JSON.stringify(seen)}`);
      realtime.closeAll();
    }
    expect(diverged).toEqual([]);
  }, 600_000);

  it('converges when the client SDK sets a status before it connects and joins a room (its sync on every session)', async () => {
    const started: Notify[] = [];
    try {
      const diverged: string[] = [];
      for (let repetition = 0; repetition < Math.ceil(REPETITIONS / 2); repetition += 1) {
        const userId = `sdk-racer-${run}-${repetition}`;
        const room = `sdk-race-${run}-${repetition}`;
        const observer = await observe([room]);
        const notify = createNotify({
          apiUrl: realtime.runtime.httpUrl,
          wsUrl: realtime.runtime.wsUrl,
          WebSocket: WebSocket as never,
          getToken: () => realtime.runtime.mintUserToken(userId),
        });
        started.push(notify);
        void notify.realtime.setPresence('busy');
        const joined = notify.realtime.joinRoom(room);
        notify.realtime.connect();
        await joined;
        const seen = await eventually(() => views(observer, userId, [room]), agreeOn('busy', 1), 10_000);
        if (!agreeOn('busy', 1)(seen)) diverged.push(`${repetition}: ${JSON.stringify(seen)}`);
        notify.stop();
        realtime.closeAll();
      }
      expect(diverged).toEqual([]);
    } finally {
      for (const notify of started) notify.stop();
    }
  }, 600_000);
});
