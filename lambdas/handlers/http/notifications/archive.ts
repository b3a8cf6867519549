import { httpRoute } from '../../../core/http/route';
import { archiveItem } from '../../../domain/notifications/item-states';

export const handler = httpRoute('notifications.archive', {}, async ({ principal, pathParameters }) => ({
  status: 200,
  body: await archiveItem(principal.id, pathParameters.receiver_id ?? ''),
}));
