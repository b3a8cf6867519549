import { httpRoute } from '../../../core/http/route';
import { interactWithItem } from '../../../domain/notifications/interact';
import { interactSchema } from '../../../domain/notifications/state-requests';

export const handler = httpRoute(
  'notifications.interact',
  { body: interactSchema },
  async ({ principal, pathParameters, body }) => ({
    status: 200,
    body: await interactWithItem(principal.id, pathParameters.receiver_id ?? '', body.action_id),
  }),
);
