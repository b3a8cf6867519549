import { httpRoute } from '../../../core/http/route';
import { retryDelivery } from '../../../domain/webhooks/delivery-admin';

export const handler = httpRoute('webhooks.retry', {}, async (request) => ({
  status: 202,
  body: await retryDelivery(request.pathParameters.id ?? '', request.pathParameters.delivery_id ?? ''),
}));
