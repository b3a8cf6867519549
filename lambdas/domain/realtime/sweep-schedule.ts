import { messageQueue } from '../../core/message-queue';
import { queryOnce } from '../../core/paging';
import { enqueue } from '../../core/sqs-send';
import * as z from '../../core/zod';
import { shardNames } from './config';
import { BY_SHARD_INDEX, table } from './tables';

/**
 * Seconds into each minute of the `ws.sweeper` schedule at which every shard is swept. Silence is noticed by
 * the first sweep after the idle timeout (45 s), so sweeps 20 s apart close a silent connection 45–65 s after
 * its last frame plus the queue's delivery time, within the contract's 75 s (docs/realtime.md).
 */
export const SWEEP_OFFSETS_SECS = [0, 20, 40] as const;

const LAST_OFFSET_SECS = SWEEP_OFFSETS_SECS[SWEEP_OFFSETS_SECS.length - 1] ?? 0;

/**
 * The shards holding a connection due by this minute's last sweep (one `Limit: 1` Query each): an idle
 * deployment, or a shard without connections, costs no sweep. A connection opened after this look cannot fall
 * silent before the next minute's (its `check_at` is the idle timeout away, more than the last offset).
 */
export const shardsToSweep = async (nowSecs = Math.floor(Date.now() / 1000)): Promise<string[]> => {
  const due = await Promise.all(
    shardNames().map(async (shard) => {
      const read = await queryOnce({
        TableName: table('connections'),
        IndexName: BY_SHARD_INDEX,
        KeyConditionExpression: '#shard = :shard AND check_at <= :until',
        ExpressionAttributeNames: { '#shard': 'shard' },
        ExpressionAttributeValues: { ':shard': shard, ':until': nowSecs + LAST_OFFSET_SECS },
        Select: 'COUNT',
        Limit: 1,
      });
      return read.count > 0 ? [shard] : [];
    }),
  );
  return due.flat();
};

/**
 * A `wsSweep` message: sweep `shard` now. `at` (epoch ms) is when this sweep was due and `later` the minute's
 * sweeps still to come, in seconds after it: the sweep queues the next one itself, handing on in `alive` what
 * its GetConnections learnt (connection ids by the epoch second before which each cannot be silent for the
 * idle timeout, since API Gateway saw a frame from it), so the next sweep does not ask again about them.
 * A message of the older form (`{shard}` alone) is one sweep.
 */
const sweepMessage = z.object({
  shard: z.string().check(z.regex(/^s\d{2,}$/)),
  at: z.optional(z.number()),
  later: z.optional(z.array(z.number().check(z.nonnegative()))),
  alive: z.optional(z.record(z.string().check(z.regex(/^\d+$/)), z.array(z.string()))),
});

export type SweepMessage = z.infer<typeof sweepMessage>;

export const sweepQueue = messageQueue('wsSweep', sweepMessage);

/**
 * Bytes of connection ids one message hands on at most: ≈ 45,000 connections (≈ 20 bytes each), more than a
 * shard holds at the scale docs/scale.md plans for (1 M connections over 32 shards), within SQS's 1 MiB.
 * SQS bills each started 64 KiB of a message as a request (send and receive): a shard of 3,000 connections
 * costs one, of 30,000 about ten, against the 30,000 GetConnections a sweep does not make. Connections beyond
 * the cap are simply asked again (safe, not free).
 */
export const ALIVE_HANDOVER_BYTES = 900_000;

/** The `wsSweep` messages that start a minute of sweeps of these shards at `nowMs`. */
export const sweepMessages = (shards: readonly string[], nowMs = Date.now()): SweepMessage[] =>
  shards.map((shard) => ({ shard, at: nowMs, later: SWEEP_OFFSETS_SECS.slice(1) }));

/** Connection id → the epoch second before which it cannot be silent for the idle timeout. */
export type AliveUntil = ReadonlyMap<string, number>;

export const aliveUntilOf = (message: SweepMessage): Map<string, number> => {
  const alive = new Map<string, number>();
  for (const [until, ids] of Object.entries(message.alive ?? {}))
    for (const id of ids) alive.set(id, Number(until));
  return alive;
};

/**
 * The message of the shard's next sweep of this minute, or undefined when this was its last, with its delay:
 * the offset still to wait, less how late this sweep ran (SQS delivery), so the sweeps stay 20 s apart
 * instead of drifting by each hop's lateness. What it hands on is what is still unknown to be alive at
 * `nowMs`, the latest first, within ALIVE_HANDOVER_BYTES.
 */
export const nextSweep = (
  message: SweepMessage,
  alive: AliveUntil,
  nowMs = Date.now(),
): { message: SweepMessage; delaySecs: number } | undefined => {
  const [gap, ...rest] = message.later ?? [];
  if (gap === undefined || message.at === undefined) return undefined;
  const lateSecs = Math.max(0, (nowMs - message.at) / 1000);
  const nowSecs = Math.floor(nowMs / 1000);
  const byUntil: Record<string, string[]> = {};
  let bytes = 0;
  for (const [id, until] of [...alive].sort(([, a], [, b]) => b - a)) {
    if (until <= nowSecs) break;
    bytes += Buffer.byteLength(id) + 3;
    if (bytes > ALIVE_HANDOVER_BYTES) break;
    const key = String(until);
    const ids = byUntil[key] ?? [];
    ids.push(id);
    byUntil[key] = ids;
  }
  const next: SweepMessage = {
    shard: message.shard,
    at: message.at + gap * 1000,
    later: rest.map((offset) => offset - gap),
    alive: byUntil,
  };
  return { message: next, delaySecs: Math.max(0, Math.round(gap - lateSecs)) };
};

/** Queues the shard's next sweep of the minute, if any (sending twice only sweeps twice). */
export const queueNextSweep = async (
  message: SweepMessage,
  alive: AliveUntil,
  nowMs = Date.now(),
): Promise<void> => {
  const next = nextSweep(message, alive, nowMs);
  if (next) await enqueue(sweepQueue, [next.message], next.delaySecs || undefined);
};

/**
 * The schedule's minute: one `wsSweep` message per shard to sweep now; each sweep queues the shard's next one
 * (+20 s, then +40 s), so the shards are swept in parallel by `ws.sweepShard` (sweeper.ts) and each sweep
 * knows which connections the one before found alive. Sending twice only sweeps twice.
 */
export const startSweeps = async (): Promise<number> => {
  const shards = await shardsToSweep();
  if (shards.length === 0) return 0;
  await enqueue(sweepQueue, sweepMessages(shards));
  return shards.length;
};
