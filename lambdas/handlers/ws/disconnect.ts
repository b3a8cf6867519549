import type { Context } from 'aws-lambda';
import { beginInvocationLog } from '../../core/logger';
import { withMetrics } from '../../core/metrics';
import { endConnection } from '../../domain/realtime/lifecycle';

/** `$disconnect` (best effort on AWS; the sweeper and 410 handling clean up when it never comes). */
export const handler = withMetrics(
  async (event: { readonly requestContext: { readonly connectionId: string } }, context: Context) => {
    beginInvocationLog(context, { route: '$disconnect', connection_id: event.requestContext.connectionId });
    await endConnection(event.requestContext.connectionId, 'disconnect');
    return { statusCode: 200 };
  },
);
