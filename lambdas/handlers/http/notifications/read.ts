import { httpRoute } from '../../../core/http/route';
import { readItem } from '../../../domain/notifications/item-states';

export const handler = httpRoute('notifications.read', {}, async ({ principal, pathParameters }) => ({
  status: 200,
  body: await readItem(principal.id, pathParameters.receiver_id ?? ''),
}));
