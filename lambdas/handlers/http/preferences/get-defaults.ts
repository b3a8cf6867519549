import { httpRoute } from '../../../core/http/route';
import { getDefaults } from '../../../domain/preferences/preferences';

export const handler = httpRoute('preferences.defaults.get', {}, async () => ({
  status: 200,
  body: await getDefaults(),
}));
