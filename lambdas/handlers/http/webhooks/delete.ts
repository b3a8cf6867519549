import { httpRoute } from '../../../core/http/route';
import { deleteWebhook } from '../../../domain/webhooks/webhooks';

export const handler = httpRoute('webhooks.delete', {}, async (request) => {
  await deleteWebhook(request.pathParameters.id ?? '');
  return { status: 204 };
});
