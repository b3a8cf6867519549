import type { Context } from 'aws-lambda';
import { beginInvocationLog, logger } from '../../core/logger';
import { withMetrics } from '../../core/metrics';
import { startSweeps } from '../../domain/realtime/sweep-schedule';

/** Every minute: starts that minute's sweeps of every shard with a connection due (docs/realtime.md, heartbeat and silence). */
export const handler = withMetrics(async (_event: unknown, context: Context): Promise<void> => {
  beginInvocationLog(context, { worker: 'ws.sweeper' });
  const shards = await startSweeps();
  logger.info('sweeps queued', { shards });
});
