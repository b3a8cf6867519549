/**
 * Silence and heartbeats with the timers as deployed (docs/realtime.md, heartbeat and silence): no test calls
 * the sweeper here. The `ws.sweeper` schedule queues the minute's first sweep per shard on `wsSweep`, each
 * sweep queues the next (+20 s, +40 s) with the connections it found alive, and `ws.sweepShard` closes silent
 * connections. Every interval of the contract is scaled down by
 * the same factor: the stand-ins' time scale shortens the schedule's minute and the SQS delays, the
 * environment the idle timeout.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { wiring } from '../../lib/wiring';
import { metering } from '../../local/lambda/runner';
import { TIME_SCALE_ENV } from '../../local/sqs/time-scale';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { TestClient } from '../support/ws-client';

/**
 * Contract §4 in seconds, and the factor that shortens all of them alike (a "minute" here is 24 s). The
 * deadline leaves a sweep 10 s (scaled: 4 s) of work after the idle time and the 20 s between sweeps.
 */
const SCALE = 0.4;
const IDLE_SECS = 45 * SCALE;
const CLOSE_DEADLINE_SECS = 75 * SCALE;
const HEARTBEAT_SECS = 20 * SCALE;

let runtime: Runtime;
const previousScale = process.env[TIME_SCALE_ENV];
const open: TestClient[] = [];

beforeAll(async () => {
  process.env[TIME_SCALE_ENV] = String(SCALE);
  runtime = await startTestRuntime({ env: { NOTIFY_WS_IDLE_TIMEOUT_SECS: String(IDLE_SECS) } });
}, 60_000);
afterAll(async () => {
  await Promise.all(open.map((client) => client.close()));
  await runtime?.stop();
  if (previousScale === undefined) delete process.env[TIME_SCALE_ENV];
  else process.env[TIME_SCALE_ENV] = previousScale;
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const connect = async (query = ''): Promise<TestClient> => {
  const client = await TestClient.open(`${runtime.wsUrl}${query}`);
  open.push(client);
  return client;
};

const connectAs = async (userId: string): Promise<TestClient> => {
  const client = await connect(`?token=${await runtime.mintUserToken(userId)}`);
  await client.nextOfType('session');
  return client;
};

/**
 * Invocations of the WebSocket route functions so far (`ws.<route key>`), not of the workers whose ids share
 * the prefix: the anonymous connection's auth deadline (`ws.authDeadline`, 4 s after it here) or a sweep ran
 * between two readings on a loaded machine and was counted as a route's.
 */
const routeFunctionIds = new Set(wiring.webSocketRoutes.map((route) => `ws.${route.routeKey}`));
const routeInvocations = () =>
  [...metering.functions]
    .filter(([id]) => routeFunctionIds.has(id))
    .reduce((total, [, meter]) => total + meter.invocations, 0);

describe('heartbeat', () => {
  it('is answered by the gateway without invoking any function, before and after auth', async () => {
    const authenticated = await connectAs('hb-user');
    const anonymous = await connect();
    const before = routeInvocations();
    for (const client of [authenticated, anonymous, authenticated]) {
      client.send({ type: 'heartbeat', id: 'beat' });
      expect(await client.nextOfType('heartbeat.ack')).toEqual({ type: 'heartbeat.ack' });
    }
    expect(routeInvocations()).toBe(before);
    // Anything else still reaches its function.
    expect(await anonymous.request({ type: 'subscribe', channel: 'room:x' })).toMatchObject({
      type: 'error',
      code: 'unauthorized',
    });
    expect(routeInvocations()).toBe(before + 1);
  });
});

describe('silence, with the deployed timers', () => {
  it(
    'closes a silent connection with idle_timeout within the deadline, keeps a heartbeat-only one, and updates presence',
    async () => {
      const beating = await connectAs('beating-bea');
      // This client sends nothing but heartbeats at the announced interval, all along.
      const beat = setInterval(() => beating.send({ type: 'heartbeat' }), HEARTBEAT_SECS * 1000);
      onTestFinished(() => clearInterval(beat));
      expect(await beating.request({ type: 'join.room', room_id: 'lobby' })).toMatchObject({ type: 'ack' });
      // This one heartbeats through the minute's first sweep, which finds it alive and hands that on to the
      // minute's next sweeps (which then do not ask about it), then falls silent with the silent one: a
      // connection handed on as alive is still closed within the deadline of its last frame.
      const fading = await connectAs('fading-fay');
      let fadingLastFrameAt = Date.now();
      const fadingBeat = setInterval(() => {
        fading.send({ type: 'heartbeat' });
        fadingLastFrameAt = Date.now();
      }, HEARTBEAT_SECS * 1000);
      onTestFinished(() => clearInterval(fadingBeat));
      // The worst case of a once-a-minute sweep: silence that becomes idle just after a sweep ran. The silent
      // client connects and sends its last frame 16 s (scaled) after the schedule fired, so it turns idle 1 s
      // (scaled) past the next minute's sweep: a sweep every minute would close it only 105 s (scaled) later.
      const { scheduler } = runtime.standIns;
      const fired = scheduler.counters().recurringInvocations;
      while (scheduler.counters().recurringInvocations === fired) await sleep(100);
      await sleep(16_000 * SCALE);
      const silent = await connectAs('quiet-quinn');
      expect(await silent.request({ type: 'join.room', room_id: 'lobby' })).toMatchObject({ type: 'ack' });
      const lastFrameAt = Date.now();
      clearInterval(fadingBeat);
      // Its closing, awaited below, runs alongside the silent one's.
      const fadingClosed = fading.nextOfType('error', CLOSE_DEADLINE_SECS * 1000 + 30_000).then((error) => ({
        error,
        silentFor: (Date.now() - fadingLastFrameAt) / 1000,
      }));
      fadingClosed.catch(() => undefined); // awaited below, after the silent one's checks
      await beating.next((frame) => frame.type === 'presence' && frame.user_id === 'quiet-quinn');

      const idleError = await silent.nextOfType('error', CLOSE_DEADLINE_SECS * 1000 + 30_000);
      const closedAt = Date.now();
      expect(idleError).toMatchObject({ type: 'error', code: 'idle_timeout' });
      expect(await silent.waitClosed()).toMatchObject({ code: 1000 });
      const silentFor = (closedAt - lastFrameAt) / 1000;
      expect(silentFor).toBeGreaterThanOrEqual(IDLE_SECS);
      expect(silentFor).toBeLessThanOrEqual(CLOSE_DEADLINE_SECS);

      // The heartbeat-only client was judged alive by every sweep meanwhile, and still is.
      expect(beating.closed).toBeUndefined();
      beating.send({ type: 'heartbeat' });
      await beating.nextOfType('heartbeat.ack');
      expect(beating.frames.filter((frame) => frame.type === 'error')).toEqual([]);
      // Presence: the room's other member sees the silent user leave, and the REST view agrees.
      expect(
        await beating.next(
          (frame) => frame.type === 'presence' && frame.user_id === 'quiet-quinn' && frame.change === 'leave',
        ),
      ).toMatchObject({ scope: 'room:lobby', status: 'offline' });
      const response = await fetch(`${runtime.httpUrl}/presence/quiet-quinn`, {
        headers: { authorization: `Bearer ${await runtime.mintUserToken('observer')}` },
      });
      expect(await response.json()).toMatchObject({ status: 'offline', connections: 0 });

      // The one that heartbeated until then is closed within the deadline of its last frame too.
      const { error: fadingError, silentFor: fadingSilentFor } = await fadingClosed;
      expect(fadingError).toMatchObject({ type: 'error', code: 'idle_timeout' });
      expect(fadingSilentFor).toBeGreaterThanOrEqual(IDLE_SECS);
      expect(fadingSilentFor).toBeLessThanOrEqual(CLOSE_DEADLINE_SECS);
      expect(beating.closed).toBeUndefined();
    },
    (CLOSE_DEADLINE_SECS + 120) * 1000,
  );
});
