import { httpRoute } from '../../../core/http/route';
import { unreadCount } from '../../../domain/notifications/feed';

export const handler = httpRoute('notifications.unreadCount', {}, async ({ principal }) => ({
  status: 200,
  body: { count: await unreadCount(principal.id) },
}));
