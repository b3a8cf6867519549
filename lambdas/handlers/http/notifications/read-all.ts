import { httpRoute } from '../../../core/http/route';
import { bulkChange } from '../../../domain/notifications/bulk';

export const handler = httpRoute('notifications.readAll', {}, async ({ principal }) => ({
  status: 200,
  body: await bulkChange(principal.id, 'mark_read'),
}));
