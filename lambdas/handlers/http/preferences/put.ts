import { httpRoute } from '../../../core/http/route';
import { preferencesOwner, putPreferences } from '../../../domain/preferences/preferences';
import { preferencesQuerySchema, putPreferencesSchema } from '../../../domain/preferences/schema';

export const handler = httpRoute(
  'preferences.put',
  { body: putPreferencesSchema, query: preferencesQuerySchema },
  async (request) => ({
    status: 200,
    body: await putPreferences(preferencesOwner(request.principal, request.query.user_id), request.body),
  }),
);
