import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envNames } from '../../lib/wiring';
import { apiClient } from '../support/api';
import { recordFunctionLogs } from '../support/function-logs';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { type Frame, TestClient } from '../support/ws-client';

let runtime: Runtime;
let dataDir: string;
let publisher: string;
let run = 0;
const clients: TestClient[] = [];

beforeAll(async () => {
  // A data folder, so the documented replay command can find this runtime's bus.
  dataDir = mkdtempSync(join(tmpdir(), 'notify-events-e2e-'));
  runtime = await startTestRuntime({ dataDir });
  run = Date.now();
  publisher = await runtime.mintServiceToken('orders', ['events:publish']);
});
afterAll(async () => {
  for (const client of clients) client.socket.terminate();
  await runtime?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const api = apiClient(() => runtime.httpUrl);

/** A unique event type per test, which is also the name of its topic. */
let seq = 0;
const eventType = (name: string) => {
  seq += 1;
  return `${name}.e2e${run}x${seq}`;
};

const event = (type: string, extra: Record<string, unknown> = {}) => ({
  event_type: type,
  source: 'orders',
  version: 2,
  data: { order_id: 'o-1' },
  ...extra,
});

/** A user's connection subscribed to `topic:<name>` (the topic is created first). */
const subscriberOf = async (topic: string): Promise<TestClient> => {
  expect((await api('POST', '/topics', publisher, { name: topic })).status).toBe(201);
  const client = await TestClient.open(`${runtime.wsUrl}?token=${await runtime.mintUserToken(`u-${run}`)}`);
  clients.push(client);
  // The session frame comes through a queue and a worker: once, under the whole suite's load, it took over 10 s.
  await client.nextOfType('session', 30_000);
  expect(await client.request({ type: 'join.topic', topic })).toMatchObject({ type: 'ack' });
  return client;
};

const eventFrame = (client: TestClient, id: string): Promise<Frame> =>
  client.next((frame) => frame.type === 'event' && frame.id === id, 60_000);

/**
 * The event frames left unread other than repeats of `ids`: event frames are at least once (a redelivered
 * event sends its frame again, same id; clients drop repeats by id), so only a frame of another id is news.
 */
const otherEventFrames = (client: TestClient, ids: readonly string[]) =>
  client.frames.filter((frame) => frame.type === 'event' && !ids.includes(frame.id as string));

describe('POST /events authorization and validation', () => {
  it('refuses a user token (403), a service without events:publish (403) and no token (401)', async () => {
    const body = event(eventType('auth'));
    expect((await api('POST', '/events', await runtime.mintUserToken('alice'), body)).body.code).toBe(
      'forbidden',
    );
    const admin = await runtime.mintUserToken('root', { roles: ['admin'] });
    expect((await api('POST', '/events', admin, body)).status).toBe(403);
    const writer = await runtime.mintServiceToken('crm', ['notifications:write']);
    expect((await api('POST', '/events', writer, body)).status).toBe(403);
    expect((await api('POST', '/events', undefined, body)).status).toBe(401);
  });

  it('answers 400 with the offending fields', async () => {
    const response = await api('POST', '/events', publisher, { ...event('x.y'), version: 0, color: 'red' });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('validation');
    expect(response.body.details.map((detail: { field: string }) => detail.field).sort()).toEqual([
      'color',
      'version',
    ]);
  });
});

describe('POST /events delivery', () => {
  it('answers 202 and pushes an event frame to the subscribers of topic:<event_type>', async () => {
    const type = eventType('order.shipped');
    const client = await subscriberOf(type);
    const response = await api('POST', '/events', publisher, event(type));
    expect(response).toEqual({ status: 202, body: { id: expect.any(String), archived: false } });
    const frame = await eventFrame(client, response.body.id);
    expect(frame).toEqual({
      type: 'event',
      channel: `topic:${type}`,
      id: response.body.id,
      event_type: type,
      source: 'orders',
      version: 2,
      data: { order_id: 'o-1' },
      time: expect.any(String),
    });
    expect(Number.isNaN(Date.parse(frame.time as string))).toBe(false);
  });

  it('with the same Idempotency-Key answers the first response and publishes once; another body is 409', async () => {
    const type = eventType('order.paid');
    const client = await subscriberOf(type);
    const key = { 'idempotency-key': `k-${run}` };
    const published = () => runtime.standIns.eventBridge.counters().putEvents;
    const before = published();
    const first = await api('POST', '/events', publisher, event(type), key);
    const second = await api('POST', '/events', publisher, event(type), key);
    expect(first.status).toBe(202);
    expect(second).toEqual(first);
    expect(JSON.stringify(second.body)).toBe(JSON.stringify(first.body));
    // Published once: the bus took one entry for the two requests (frames are at least once, so they prove less).
    expect(published() - before).toBe(1);
    await eventFrame(client, first.body.id);
    const conflict = await api('POST', '/events', publisher, event(type, { version: 3 }), key);
    expect(conflict.status).toBe(409);
    expect(published() - before).toBe(1);
    // A later event proves the repeat sent no other event in between.
    const later = await api('POST', '/events', publisher, event(type));
    await eventFrame(client, later.body.id);
    expect(otherEventFrames(client, [first.body.id, later.body.id])).toEqual([]);
  });

  it('archives archive: true events only, and `npm run replay` delivers them again', async () => {
    const type = eventType('order.audited');
    const client = await subscriberOf(type);
    const kept = await api('POST', '/events', publisher, event(type, { archive: true }));
    const notKept = await api('POST', '/events', publisher, event(type));
    expect(kept.body.archived).toBe(true);
    expect(notKept.body.archived).toBe(false);
    await eventFrame(client, kept.body.id);
    await eventFrame(client, notKept.body.id);

    const { stdout } = await promisify(execFile)(
      'npm',
      ['run', '--silent', 'replay', '--', '--data', dataDir],
      {
        env: { ...process.env },
      },
    );
    expect(stdout).toMatch(/COMPLETED/);
    // A replay is a new frame: its own id, marked, naming the original, so de-duplicating by id keeps it.
    const replayed = await client.next(
      (frame) => frame.type === 'event' && frame.original_id === kept.body.id,
      60_000,
    );
    expect(replayed).toMatchObject({
      event_type: type,
      version: 2,
      replayed: true,
      data: { order_id: 'o-1' },
    });
    expect(replayed.id).toEqual(expect.any(String));
    expect(replayed.id).not.toBe(kept.body.id);
    // The non-archived event is not replayed: wait for a fresh event, then nothing else came.
    const marker = await api('POST', '/events', publisher, event(type));
    await eventFrame(client, marker.body.id);
    // Nothing came but repeats of these (event frames are at least once).
    expect(
      otherEventFrames(client, [kept.body.id, notKept.body.id, replayed.id as string, marker.body.id]),
    ).toEqual([]);
  }, 60_000);

  it('answers 503 when the bus does not accept the entry (a missing bus), and delivers nothing', async () => {
    const type = eventType('order.lost');
    const client = await subscriberOf(type);
    // Handlers run in this process and read the bus name per request: point them at a bus that does not exist.
    const busName = process.env[envNames.busName];
    process.env[envNames.busName] = 'missing-bus';
    const logs = recordFunctionLogs();
    try {
      const response = await api('POST', '/events', publisher, event(type));
      expect(response.status).toBe(503);
      expect(response.body.code).toBe('unavailable');
      expect(JSON.stringify(response.body)).not.toMatch(/ResourceNotFound|at .*\.ts/);
      // What the client is not shown is logged, with its request id.
      expect(logs.at('ERROR')).toContainEqual(
        expect.objectContaining({
          message: 'request failed',
          route: 'events.publish',
          request_id: response.body.request_id,
        }),
      );
    } finally {
      process.env[envNames.busName] = busName;
    }
    const marker = await api('POST', '/events', publisher, event(type));
    expect(marker.status).toBe(202);
    await eventFrame(client, marker.body.id);
    expect(otherEventFrames(client, [marker.body.id])).toEqual([]);
  });
});
