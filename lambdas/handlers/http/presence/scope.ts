import { z } from 'zod';
import { httpRoute } from '../../../core/http/route';
import { scopePresence } from '../../../domain/realtime/presence';

const query = z.strictObject({
  scope: z.string().regex(/^room:\S{1,256}$/, 'must be room:<id>'),
});

/** GET /presence?scope=room:<id>. */
export const handler = httpRoute('presence.scope', { query }, async (request) => ({
  status: 200,
  body: await scopePresence(request.query.scope),
}));
