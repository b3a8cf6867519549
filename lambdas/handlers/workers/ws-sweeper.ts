import { logger } from '../../core/logger';
import { withMetrics } from '../../core/metrics';
import { startSweeps } from '../../domain/realtime/sweep-schedule';

/** Every minute: queues that minute's three sweeps of every shard (docs/realtime.md, heartbeat and silence). */
export const handler = withMetrics(async (): Promise<void> => {
  const shards = await startSweeps();
  logger.info('sweeps queued', { shards });
});
