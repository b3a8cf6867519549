import { httpRoute } from '../../../core/http/route';
import { scopePresence } from '../../../domain/realtime/presence';
import { presenceScopeQuerySchema } from '../../../domain/realtime/presence-schema';

/** GET /presence?scope=room:<id>. */
export const handler = httpRoute('presence.scope', { query: presenceScopeQuerySchema }, async (request) => ({
  status: 200,
  body: await scopePresence(request.query.scope, request.query),
}));
