import openApi from '../../../docs/api/openapi.json' with { type: 'json' };
import { httpRoute } from '../../core/http/route';

const document = JSON.stringify(openApi);

/** GET /openapi.json: the committed description, as written by `npm run api-docs`. */
export const handler = httpRoute('platform.openapi', {}, async () => ({
  status: 200,
  headers: { 'Content-Type': 'application/json', 'Cache-Control': 'public, max-age=300' },
  text: document,
}));
