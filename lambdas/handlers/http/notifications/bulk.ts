import { httpRoute } from '../../../core/http/route';
import { bulkChange } from '../../../domain/notifications/bulk';
import { bulkChangeRequestSchema } from '../../../domain/notifications/state-requests';

export const handler = httpRoute(
  'notifications.bulk',
  { body: bulkChangeRequestSchema },
  async ({ principal, body }) => ({
    status: 200,
    body: await bulkChange(principal.id, body.action, { before: body.before, category: body.category }),
  }),
);
