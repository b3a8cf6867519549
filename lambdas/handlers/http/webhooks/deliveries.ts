import { httpRoute } from '../../../core/http/route';
import { listDeliveries } from '../../../domain/webhooks/delivery-admin';
import { listDeliveriesQuerySchema } from '../../../domain/webhooks/schema';

export const handler = httpRoute(
  'webhooks.deliveries',
  { query: listDeliveriesQuerySchema },
  async (request) => ({
    status: 200,
    body: await listDeliveries(request.pathParameters.id ?? '', request.query),
  }),
);
