import { httpRoute } from '../../../core/http/route';
import { listWebhooks } from '../../../domain/webhooks/webhooks';

export const handler = httpRoute('webhooks.list', {}, async () => ({
  status: 200,
  body: { items: await listWebhooks() },
}));
