import { httpRoute } from '../../../core/http/route';
import * as z from '../../../core/zod';
import { scopePresence } from '../../../domain/realtime/presence';

const query = z.strictObject({
  scope: z.string().check(z.regex(/^room:\S{1,256}$/, 'must be room:<id>')),
});

/** GET /presence?scope=room:<id>. */
export const handler = httpRoute('presence.scope', { query }, async (request) => ({
  status: 200,
  body: await scopePresence(request.query.scope),
}));
