import { httpRoute } from '../../../core/http/route';
import { userPresence } from '../../../domain/realtime/presence';

/** GET /presence/{user_id}. */
export const handler = httpRoute('presence.user', {}, async (request) => ({
  status: 200,
  body: await userPresence(request.pathParameters.user_id ?? ''),
}));
