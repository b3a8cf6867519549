import { httpRoute } from '../../../core/http/route';
import { notificationSummary } from '../../../domain/push/report';

export const handler = httpRoute('push.summary', {}, async (request) => ({
  status: 200,
  body: await notificationSummary(request.principal, request.pathParameters.notification_id ?? ''),
}));
