import { logger } from '../../core/logger';
import { sqsWorker } from '../../core/sqs-worker';
import { shardOfSweepMessage } from '../../domain/realtime/sweep-schedule';
import { sweepShard } from '../../domain/realtime/sweeper';

/** Sweeps one `byShard` shard: auth deadlines, expired tokens, silent and vanished connections. */
export const handler = sqsWorker('ws.sweepShard', async (body) => {
  const shard = shardOfSweepMessage(body);
  const counts = await sweepShard(shard);
  logger.info('sweep', { shard, ...counts });
});
