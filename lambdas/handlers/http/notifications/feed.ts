import { httpRoute } from '../../../core/http/route';
import { listFeed } from '../../../domain/notifications/feed';
import { feedQuerySchema } from '../../../domain/notifications/feed-query';

export const handler = httpRoute(
  'notifications.feed',
  { query: feedQuerySchema },
  async ({ principal, query }) => ({
    status: 200,
    body: await listFeed(principal.id, query),
  }),
);
