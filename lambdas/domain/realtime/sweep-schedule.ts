import { queueUrl } from '../../core/clients';
import { queryOnce } from '../../core/paging';
import { sendAll } from '../../core/sqs-send';
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

/** The `wsSweep` messages of one sweep of these shards. */
export const sweepMessages = (shards: readonly string[]): string[] =>
  shards.map((shard) => JSON.stringify({ shard }));

const sweepMessageSchema = z.object({ shard: z.string().check(z.regex(/^s\d{2,}$/)) });

/** The shard a `wsSweep` message names (a malformed message throws, and ends in the queue's DLQ). */
export const shardOfSweepMessage = (body: string): string => sweepMessageSchema.parse(JSON.parse(body)).shard;

/**
 * The schedule's minute: one `wsSweep` message per shard to sweep now, and again delayed by each later offset,
 * so the shards are swept in parallel by `ws.sweepShard` (sweeper.ts). Sending twice only sweeps twice.
 */
export const startSweeps = async (): Promise<number> => {
  const shards = await shardsToSweep();
  if (shards.length === 0) return 0;
  const bodies = sweepMessages(shards);
  await Promise.all(
    SWEEP_OFFSETS_SECS.map((offset) => sendAll(queueUrl('wsSweep'), bodies, offset || undefined)),
  );
  return shards.length;
};
