import { logger } from '../../core/logger';
import { withMetrics } from '../../core/metrics';
import { sweep } from '../../domain/realtime/sweeper';

/** Every minute: auth deadlines, expired tokens, silent and vanished connections (docs/realtime.md). */
export const handler = withMetrics(async (): Promise<void> => {
  const counts = await sweep();
  logger.info('sweep', { ...counts });
});
