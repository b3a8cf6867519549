import { httpRoute } from '../../../core/http/route';

export const handler = httpRoute('health.live', {}, async () => ({ status: 200, body: { status: 'ok' } }));
