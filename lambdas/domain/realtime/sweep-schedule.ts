import { queueUrl } from '../../core/clients';
import { sendAll } from '../../core/sqs-send';
import { shardNames } from './config';

/**
 * Seconds into each minute of the `ws.sweeper` schedule at which every shard is swept. Silence is noticed by
 * the first sweep after the idle timeout (45 s), so sweeps 20 s apart close a silent connection 45–65 s after
 * its last frame plus the queue's delivery time, within the contract's 75 s (docs/realtime.md).
 */
export const SWEEP_OFFSETS_SECS = [0, 20, 40] as const;

/**
 * The schedule's minute: one `wsSweep` message per shard now, and again delayed by each later offset, so the
 * shards are swept in parallel by `ws.sweepShard` (sweeper.ts). Sending twice only sweeps twice.
 */
export const startSweeps = async (): Promise<void> => {
  const bodies = shardNames().map((shard) => JSON.stringify({ shard }));
  await Promise.all(
    SWEEP_OFFSETS_SECS.map((offset) => sendAll(queueUrl('wsSweep'), bodies, offset || undefined)),
  );
};
