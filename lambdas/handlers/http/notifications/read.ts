import { httpRoute } from '../../../core/http/route';
import { markRead } from '../../../domain/notifications/feed';

export const handler = httpRoute('notifications.read', {}, async ({ principal, pathParameters }) => ({
  status: 200,
  body: await markRead(principal.id, pathParameters.receiver_id ?? ''),
}));
