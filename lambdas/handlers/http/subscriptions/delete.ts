import { httpRoute } from '../../../core/http/route';
import { unsubscribe } from '../../../domain/topics/subscriptions';

export const handler = httpRoute('subscriptions.delete', {}, async (request) => {
  await unsubscribe(request.principal, request.pathParameters.id ?? '');
  return { status: 204 };
});
