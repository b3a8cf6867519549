import { logger } from '../../core/logger';
import { sqsWorker } from '../../core/workers';
import { aliveUntilOf, queueNextSweep, sweepQueue } from '../../domain/realtime/sweep-schedule';
import { sweepShard } from '../../domain/realtime/sweeper';

/**
 * Sweeps one `byShard` shard (auth deadlines, expired tokens, silent and vanished connections), then queues the
 * shard's next sweep of the minute with what this one learnt.
 */
export const handler = sqsWorker('ws.sweepShard', sweepQueue, async (message) => {
  const startedAt = Date.now();
  const { counts, alive } = await sweepShard(message.shard, startedAt, aliveUntilOf(message));
  await queueNextSweep(message, alive);
  logger.info('sweep', { shard: message.shard, ...counts });
});
