import { withMetrics } from '../../core/metrics';
import { endConnection } from '../../domain/realtime/lifecycle';

/** `$disconnect` (best effort on AWS; the sweeper and 410 handling clean up when it never comes). */
export const handler = withMetrics(
  async (event: { readonly requestContext: { readonly connectionId: string } }) => {
    await endConnection(event.requestContext.connectionId, 'disconnect');
    return { statusCode: 200 };
  },
);
