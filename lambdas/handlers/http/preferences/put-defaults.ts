import { httpRoute } from '../../../core/http/route';
import { putDefaults } from '../../../domain/preferences/preferences';
import { putDefaultsSchema } from '../../../domain/preferences/schema';

export const handler = httpRoute(
  'preferences.defaults.put',
  { body: putDefaultsSchema },
  async (request) => ({
    status: 200,
    body: await putDefaults(request.body),
  }),
);
