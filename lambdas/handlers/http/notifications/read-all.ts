import { httpRoute } from '../../../core/http/route';
import { readAll } from '../../../domain/notifications/feed';

export const handler = httpRoute('notifications.readAll', {}, async ({ principal }) => ({
  status: 200,
  body: await readAll(principal.id),
}));
