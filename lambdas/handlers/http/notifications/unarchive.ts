import { httpRoute } from '../../../core/http/route';
import { unarchiveItem } from '../../../domain/notifications/item-states';

export const handler = httpRoute('notifications.unarchive', {}, async ({ principal, pathParameters }) => ({
  status: 200,
  body: await unarchiveItem(principal.id, pathParameters.receiver_id ?? ''),
}));
