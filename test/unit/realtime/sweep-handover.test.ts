/**
 * The minute's sweeps of a shard hand on what their GetConnections learnt (docs/realtime.md, heartbeat and
 * silence): a connection API Gateway saw a frame from is not asked about again before it could be silent for
 * the idle timeout, and is asked at the first sweep after that, so the close deadline does not move.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentClient, tableName } from '../../../lambdas/core/clients';
import { messageBody } from '../../../lambdas/core/message-queue';
import { realtimeSettings, shardOf } from '../../../lambdas/domain/realtime/config';
import { openConnection } from '../../../lambdas/domain/realtime/lifecycle';
import {
  ALIVE_HANDOVER_BYTES,
  aliveUntilOf,
  nextSweep,
  SWEEP_OFFSETS_SECS,
  sweepMessages,
  sweepQueue,
} from '../../../lambdas/domain/realtime/sweep-schedule';
import { sweepShard } from '../../../lambdas/domain/realtime/sweeper';
import { envNames, SQS_MAX_MESSAGE_BYTES } from '../../../lib/wiring';
import { apiGatewayId } from '../../../local/gateway/ids';
import { type LiveConnectionsEndpoint, startLiveConnectionsEndpoint } from '../../../local/metering';
import { useDynamoDbLocal } from '../../support/dynamodb';
import { messageOf } from '../../support/queues';
import { userPrincipal } from '../../support/tokens';

const T0 = Date.UTC(2026, 10, 23, 2, 0, 0);

/** The body `queueNextSweep` sends for a next sweep. */
const bodyOf = (next: ReturnType<typeof nextSweep>) => (next ? messageBody(sweepQueue, next.message) : '');

describe('the next sweep of the minute', () => {
  const [first] = sweepMessages(['s03'], T0).map((message) => messageBody(sweepQueue, message));

  it('starts at the planner, each sweep queuing the next 20 s later until the last offset', () => {
    const message = messageOf(sweepQueue, first ?? '');
    expect(message).toEqual({ shard: 's03', at: T0, later: [20, 40] });
    const second = nextSweep(message, new Map(), T0 + 1_500);
    // 1.5 s late (SQS delivery, the sweep itself): the next one waits that much less, so sweeps do not drift.
    expect(second?.delaySecs).toBe(19);
    const secondMessage = messageOf(sweepQueue, bodyOf(second));
    expect(secondMessage).toMatchObject({ shard: 's03', at: T0 + 20_000, later: [20] });
    const third = nextSweep(secondMessage, new Map(), T0 + 20_000);
    expect(third?.delaySecs).toBe(20);
    expect(nextSweep(messageOf(sweepQueue, bodyOf(third)), new Map(), T0 + 40_000)).toBeUndefined();
    expect(SWEEP_OFFSETS_SECS).toEqual([0, 20, 40]);
  });

  it('hands on only what is still unknown to be silent, and a message of the older form is one sweep', () => {
    const nowSecs = T0 / 1000;
    const alive = new Map([
      ['past', nowSecs - 1],
      ['now', nowSecs],
      ['soon', nowSecs + 5],
      ['later', nowSecs + 30],
    ]);
    const next = nextSweep({ shard: 's01', at: T0, later: [20] }, alive, T0);
    const handed = aliveUntilOf(messageOf(sweepQueue, bodyOf(next)));
    expect(handed).toEqual(
      new Map([
        ['later', nowSecs + 30],
        ['soon', nowSecs + 5],
      ]),
    );
    expect(nextSweep(messageOf(sweepQueue, '{"shard":"s01"}'), alive, T0)).toBeUndefined();
  });

  it('keeps the hand-over within the SQS message size, the connections alive longest first', () => {
    const nowSecs = T0 / 1000;
    const alive = new Map(
      Array.from({ length: 60_000 }, (_, index) => [apiGatewayId(), nowSecs + 1 + (index % 45)] as const),
    );
    const next = nextSweep({ shard: 's01', at: T0, later: [20] }, alive, T0);
    expect(Buffer.byteLength(bodyOf(next))).toBeLessThanOrEqual(SQS_MAX_MESSAGE_BYTES);
    const handed = aliveUntilOf(messageOf(sweepQueue, bodyOf(next)));
    expect(handed.size).toBeGreaterThan(ALIVE_HANDOVER_BYTES / 25);
    expect(handed.size).toBeLessThan(alive.size);
    // What is dropped is asked again; what is kept is what would be asked about latest.
    const kept = Math.min(...handed.values());
    for (const [id, until] of alive) if (until > kept) expect(handed.get(id)).toBe(until);
    // A shard of a few thousand connections fits one 64 KiB SQS billing unit.
    const small = new Map([...alive].slice(0, 3_000));
    const smallNext = nextSweep({ shard: 's01', at: T0, later: [20] }, small, T0);
    expect(Buffer.byteLength(bodyOf(smallNext))).toBeLessThanOrEqual(64 * 1024);
    expect(aliveUntilOf(messageOf(sweepQueue, bodyOf(smallNext))).size).toBe(3_000);
  });

  it('refuses a malformed message (it ends in the DLQ)', () => {
    expect(() => messageOf(sweepQueue, '{"shard":"s01","alive":{"soon":["a"]}}')).toThrow();
    expect(() => messageOf(sweepQueue, '{"shard":"s01","later":[-20]}')).toThrow();
  });
});

describe('a shard swept three times a minute, on DynamoDB Local', () => {
  useDynamoDbLocal();
  const asked: string[] = [];
  let endpoint: LiveConnectionsEndpoint | undefined;
  const shard = 's05';
  let ids: string[] = [];

  beforeAll(async () => {
    // The endpoint says every connection was active just now (as if each had sent a heartbeat).
    endpoint = await startLiveConnectionsEndpoint((call, connectionId) => {
      if (call === 'get') asked.push(connectionId);
    });
    process.env[envNames.wsCallbackUrl] = endpoint.url;
    while (ids.length < 12) {
      const id = apiGatewayId();
      if (shardOf(id) === shard) ids.push(id);
    }
    ids = ids.sort();
    const nowSecs = Math.floor(Date.now() / 1000);
    for (const id of ids) {
      await openConnection(id, userPrincipal(`sweep-${id}`));
      // Past its idle timeout since it authenticated: every sweep looks at it.
      await documentClient().send(
        new UpdateCommand({
          TableName: tableName('wsConnections'),
          Key: { connection_id: id },
          UpdateExpression: 'SET check_at = :past',
          ExpressionAttributeValues: { ':past': nowSecs - 1 },
        }),
      );
    }
  }, 60_000);
  afterAll(async () => {
    await endpoint?.stop();
  });

  it('asks API Gateway once per connection, then not until the idle timeout since its last frame could have passed', async () => {
    const start = Date.now();
    const idleMs = realtimeSettings().idleTimeoutSecs * 1000;
    const first = await sweepShard(shard, start);
    expect(first.counts).toMatchObject({ alive: ids.length, known_alive: 0 });
    expect([...asked].sort()).toEqual(ids);
    for (const id of ids) {
      // The endpoint's LastActiveAt is the moment it answered (≥ start): not silent long enough before then.
      expect(first.alive.get(id)).toBeGreaterThanOrEqual(Math.floor((start + idleMs) / 1000));
    }

    // The sweep 20 s later gets the hand-over: no GetConnection at all.
    asked.length = 0;
    const handedOn = aliveUntilOf(
      messageOf(sweepQueue, bodyOf(nextSweep({ shard, at: start, later: [20] }, first.alive, start))),
    );
    const second = await sweepShard(shard, start + 20_000, handedOn);
    expect(second.counts).toMatchObject({ alive: 0, known_alive: ids.length });
    expect(asked).toEqual([]);
    expect(second.alive).toEqual(handedOn);

    // Without a hand-over (the minute's first sweep, a lost message), everything is asked: slower, not wrong.
    asked.length = 0;
    await sweepShard(shard, start + 20_000);
    expect(asked).toHaveLength(ids.length);

    // At a sweep after the moment silence could reach the idle timeout, every one is asked again (and, judged
    // at that sweep's clock, the endpoint's LastActiveAt being seconds after `start`, closed as silent).
    asked.length = 0;
    const third = await sweepShard(shard, start + idleMs + 30_000, second.alive);
    expect(third.counts).toMatchObject({ idle: ids.length, known_alive: 0 });
    expect([...asked].sort()).toEqual(ids);
  });
});
