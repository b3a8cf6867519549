import { httpRoute } from '../../../core/http/route';
import { vapidPublicKey } from '../../../domain/push/vapid';
import { vapidPublicKeyQuerySchema } from '../../../domain/push/vapid-schema';

export const handler = httpRoute(
  'push.vapidPublicKey',
  { query: vapidPublicKeyQuerySchema },
  async (request) => ({
    status: 200,
    body: await vapidPublicKey(request.query.app_id ?? null),
  }),
);
