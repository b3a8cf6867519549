import type { HttpRoute, Wiring } from './types';

/**
 * The one declaration of the service's wiring. lib/stack builds AWS resources from it; local/ mounts the
 * same handler modules from it. Routes enter as their issues implement them.
 */

const health = (id: string, path: string, handler: string, extra: Partial<HttpRoute> = {}): HttpRoute => ({
  id,
  method: 'GET',
  path,
  handler,
  access: { public: true },
  memoryMb: 128,
  timeoutSecs: 5,
  ...extra,
});

export const wiring: Wiring = {
  httpRoutes: [
    health('health.live', '/live', 'lambdas/handlers/http/health/live.ts'),
    health('health.ready', '/ready', 'lambdas/handlers/http/health/ready.ts', { reads: ['replay'] }),
    health('health.health', '/health', 'lambdas/handlers/http/health/health.ts', { reads: ['replay'] }),
    health('health.metrics', '/metrics', 'lambdas/handlers/http/health/metrics.ts'),
  ],
  webSocketRoutes: [],
  tables: [
    {
      id: 'replay',
      purpose: 'jti replay set shared by every function instance; an entry lives until its token expires',
      partitionKey: { name: 'jti', type: 'S' },
      ttlAttribute: 'ttl',
    },
  ],
  queues: [],
  workers: [],
  busRules: [],
  recurringSchedules: [],
  scheduleTargets: [],
};
