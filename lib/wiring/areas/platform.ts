import { DEFAULT_ROUTE_PATH, type HttpRoute, type WiringPart } from '../types';

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

/** Health endpoints and the tables every authenticated route relies on. */
export const platform: WiringPart = {
  httpRoutes: [
    health('health.live', '/live', 'lambdas/handlers/http/health/live.ts'),
    health('health.ready', '/ready', 'lambdas/handlers/http/health/ready.ts', { reads: ['tokenReplay'] }),
    health('health.health', '/health', 'lambdas/handlers/http/health/health.ts', {
      reads: ['tokenReplay'],
    }),
    health('health.metrics', '/metrics', 'lambdas/handlers/http/health/metrics.ts'),
    // The committed docs/api/openapi.json, bundled into the function (api-docs/ writes it).
    health('platform.openapi', '/openapi.json', 'lambdas/handlers/http/openapi.ts'),
    // Unmatched requests get the contract's 404 / 405 bodies instead of API Gateway's own {"message"}.
    {
      id: 'platform.fallback',
      method: 'ANY',
      path: DEFAULT_ROUTE_PATH,
      handler: 'lambdas/handlers/http/fallback.ts',
      access: { public: true },
      memoryMb: 128,
      timeoutSecs: 5,
    },
  ],
  tables: [
    {
      id: 'tokenReplay',
      // Declared as `replay` at first: a new logical id would make CloudFormation replace the table.
      deployedAs: 'replay',
      purpose:
        'the jti of every single-use token seen, shared by every function instance (token replay protection); an entry lives until its token expires',
      partitionKey: { name: 'jti', type: 'S' },
      ttlAttribute: 'ttl',
    },
  ],
};
