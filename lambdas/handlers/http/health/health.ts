import { httpRoute } from '../../../core/http/route';
import { allOk, checkDependencies } from '../../../domain/health/checks';

export const handler = httpRoute('health.health', {}, async () => {
  const checks = await checkDependencies();
  return { status: 200, body: { status: allOk(checks) ? 'ok' : 'degraded', checks } };
});
