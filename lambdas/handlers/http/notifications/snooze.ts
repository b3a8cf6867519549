import { httpRoute } from '../../../core/http/route';
import { snoozeItem } from '../../../domain/notifications/item-states';
import { snoozeSchema } from '../../../domain/notifications/state-requests';

export const handler = httpRoute(
  'notifications.snooze',
  { body: snoozeSchema },
  async ({ principal, pathParameters, body }) => ({
    status: 200,
    body: await snoozeItem(principal.id, pathParameters.receiver_id ?? '', body.until),
  }),
);
