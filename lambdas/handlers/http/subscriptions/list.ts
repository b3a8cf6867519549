import { httpRoute } from '../../../core/http/route';
import { listSubscriptions } from '../../../domain/topics/subscriptions';

export const handler = httpRoute('subscriptions.list', {}, async (request) => ({
  status: 200,
  body: { items: await listSubscriptions(request.principal.id) },
}));
