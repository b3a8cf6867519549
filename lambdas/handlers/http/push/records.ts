import { httpRoute } from '../../../core/http/route';
import { listPushesQuerySchema } from '../../../domain/push/query';
import { listPushes } from '../../../domain/push/report';

export const handler = httpRoute('push.records', { query: listPushesQuerySchema }, async (request) => ({
  status: 200,
  body: await listPushes(request.principal, request.pathParameters.notification_id ?? '', request.query),
}));
