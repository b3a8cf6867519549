import { httpRoute } from '../../../core/http/route';
import { withIdempotency } from '../../../domain/idempotency';
import { createNotification } from '../../../domain/notifications/create';
import { createNotificationSchema } from '../../../domain/notifications/schema';

export const handler = httpRoute(
  'notifications.create',
  { body: createNotificationSchema },
  async (request) => {
    const scope = {
      operation: 'notifications.create',
      principal: request.principal,
      key: request.headers['idempotency-key'],
    };
    const response = await withIdempotency(scope, request.body, (id) =>
      createNotification(request.principal, request.body, id),
    );
    return { status: response.status, body: response.body };
  },
);
