import { httpRoute } from '../../../core/http/route';
import { createWebhookSchema } from '../../../domain/webhooks/schema';
import { createWebhook } from '../../../domain/webhooks/webhooks';

export const handler = httpRoute('webhooks.create', { body: createWebhookSchema }, async (request) => ({
  status: 201,
  body: await createWebhook(request.body),
}));
