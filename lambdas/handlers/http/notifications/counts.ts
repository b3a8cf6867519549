import { httpRoute } from '../../../core/http/route';
import { feedCounts } from '../../../domain/notifications/feed';

export const handler = httpRoute('notifications.counts', {}, async ({ principal }) => ({
  status: 200,
  body: await feedCounts(principal.id),
}));
