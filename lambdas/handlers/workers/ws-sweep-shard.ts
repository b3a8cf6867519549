import { logger } from '../../core/logger';
import { sqsWorker } from '../../core/sqs-worker';
import * as z from '../../core/zod';
import { sweepShard } from '../../domain/realtime/sweeper';

const sweepMessage = z.object({ shard: z.string().check(z.regex(/^s\d{2,}$/)) });

/** Sweeps one `byShard` shard: auth deadlines, expired tokens, silent and vanished connections. */
export const handler = sqsWorker('ws.sweepShard', async (body) => {
  const { shard } = sweepMessage.parse(JSON.parse(body));
  const counts = await sweepShard(shard);
  logger.info('sweep', { shard, ...counts });
});
