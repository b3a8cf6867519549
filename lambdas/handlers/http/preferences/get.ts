import { httpRoute } from '../../../core/http/route';
import { getPreferences, preferencesOwner } from '../../../domain/preferences/preferences';
import { preferencesQuerySchema } from '../../../domain/preferences/schema';

export const handler = httpRoute('preferences.get', { query: preferencesQuerySchema }, async (request) => ({
  status: 200,
  body: await getPreferences(preferencesOwner(request.principal, request.query.user_id)),
}));
