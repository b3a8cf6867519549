import { httpRoute } from '../../../core/http/route';
import { markItemsSeen } from '../../../domain/notifications/item-states';
import { markSeenSchema } from '../../../domain/notifications/state-requests';

export const handler = httpRoute(
  'notifications.seen',
  { body: markSeenSchema },
  async ({ principal, body }) => ({
    status: 200,
    body: { items: await markItemsSeen(principal.id, body.ids) },
  }),
);
