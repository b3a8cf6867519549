import { httpRoute } from '../../../core/http/route';
import { listDeliveriesQuerySchema } from '../../../domain/webhooks/deliveries-query';
import { listDeliveries } from '../../../domain/webhooks/delivery-admin';

export const handler = httpRoute(
  'webhooks.deliveries',
  { query: listDeliveriesQuerySchema },
  async (request) => ({
    status: 200,
    body: await listDeliveries(request.pathParameters.id ?? '', request.query),
  }),
);
