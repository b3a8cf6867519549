import { httpRoute } from '../../../core/http/route';
import { snoozeItem } from '../../../domain/notifications/snooze';
import { snoozeSchema } from '../../../domain/notifications/snooze-request';

export const handler = httpRoute(
  'notifications.snooze',
  { body: snoozeSchema },
  async ({ principal, pathParameters, body }) => ({
    status: 200,
    body: await snoozeItem(principal.id, pathParameters.receiver_id ?? '', body.until),
  }),
);
