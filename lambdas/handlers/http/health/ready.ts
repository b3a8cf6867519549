import { httpRoute } from '../../../core/http/route';
import { allOk, checkDependencies } from '../../../domain/health/checks';

export const handler = httpRoute('health.ready', {}, async () => {
  const checks = await checkDependencies();
  const ready = allOk(checks);
  return { status: ready ? 200 : 503, body: { status: ready ? 'ready' : 'unavailable', checks } };
});
