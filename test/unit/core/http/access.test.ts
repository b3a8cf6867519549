import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRoute } from '../../../../lambdas/core/http/route';
import type { Access } from '../../../../lib/wiring';
import { authEnvFor, serviceToken, TEST_HS256_SECRET, userToken } from '../../../support/tokens';

/**
 * Route access as declared (lib/wiring) and enforced before the handler runs: every kind of declaration against
 * every kind of caller, through the HTTP plumbing, with the 403 and the reason the caller reads.
 */
const callers = {
  user: () => userToken(TEST_HS256_SECRET, { sub: 'alice', roles: ['staff'] }),
  admin: () => userToken(TEST_HS256_SECRET, { sub: 'root', roles: ['admin'] }),
  publisher: () => serviceToken(TEST_HS256_SECRET, { sub: 'shop', scope: 'events:publish' }),
  'other-scope': () => serviceToken(TEST_HS256_SECRET, { sub: 'ops', scope: 'webhooks:admin' }),
  'no-scope': () => serviceToken(TEST_HS256_SECRET, { sub: 'bare' }),
};
type Caller = keyof typeof callers;

const NEEDS_USER = 'This operation needs a user token';
const NEEDS_SERVICE = 'This operation needs a service token';
const NEEDS_ADMIN = 'This operation needs the admin role';
const NEEDS_PUBLISH = 'This operation needs the events:publish scope';
const OK = 'ok';

/** What each caller gets from a route with the given access: OK, or the reason of the 403. */
const matrix: [string, Access, Record<Caller, string>][] = [
  ['public', { public: true }, { user: OK, admin: OK, publisher: OK, 'other-scope': OK, 'no-scope': OK }],
  [
    'any user',
    { users: 'any' },
    { user: OK, admin: OK, publisher: NEEDS_USER, 'other-scope': NEEDS_USER, 'no-scope': NEEDS_USER },
  ],
  [
    'admin users',
    { users: 'admin' },
    {
      user: NEEDS_ADMIN,
      admin: OK,
      publisher: NEEDS_USER,
      'other-scope': NEEDS_USER,
      'no-scope': NEEDS_USER,
    },
  ],
  [
    'any service',
    { services: 'any' },
    { user: NEEDS_SERVICE, admin: NEEDS_SERVICE, publisher: OK, 'other-scope': OK, 'no-scope': OK },
  ],
  [
    'services with events:publish',
    { services: 'events:publish' },
    {
      user: NEEDS_SERVICE,
      admin: NEEDS_SERVICE,
      publisher: OK,
      'other-scope': NEEDS_PUBLISH,
      'no-scope': NEEDS_PUBLISH,
    },
  ],
  [
    'any user or services with events:publish',
    { users: 'any', services: 'events:publish' },
    { user: OK, admin: OK, publisher: OK, 'other-scope': NEEDS_PUBLISH, 'no-scope': NEEDS_PUBLISH },
  ],
  [
    'admin users or any service',
    { users: 'admin', services: 'any' },
    { user: NEEDS_ADMIN, admin: OK, publisher: OK, 'other-scope': OK, 'no-scope': OK },
  ],
];

const context = { awsRequestId: 'lambda-1', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;
const saved = { ...process.env };
const tokens = {} as Record<Caller, string>;

beforeAll(async () => {
  Object.assign(process.env, authEnvFor(undefined));
  for (const caller of Object.keys(callers) as Caller[]) tokens[caller] = await callers[caller]();
});
afterAll(() => {
  process.env = saved;
});

describe.each(matrix)('a route for %s', (_what, access, expected) => {
  let handlerRuns = 0;
  const handler = httpRoute(
    { id: 'test.access', method: 'GET', path: '/things', handler: 'unused.ts', access },
    {},
    async () => {
      handlerRuns += 1;
      return { status: 200, body: { ok: true } };
    },
  );

  it.each(Object.keys(callers) as Caller[])('answers a %s token as declared', async (caller) => {
    const runsBefore = handlerRuns;
    const result = (await handler(
      {
        version: '2.0',
        routeKey: 'GET /api/v1/things',
        rawPath: '/api/v1/things',
        rawQueryString: '',
        headers: { authorization: `Bearer ${tokens[caller]}` },
        isBase64Encoded: false,
        requestContext: { requestId: 'apigw-1', http: { method: 'GET', path: '/api/v1/things' } },
      } as unknown as APIGatewayProxyEventV2,
      context as Parameters<typeof handler>[1],
    )) as APIGatewayProxyStructuredResultV2;
    const body = JSON.parse(result.body ?? '{}');
    if (expected[caller] === OK) {
      expect(result.statusCode).toBe(200);
      expect(handlerRuns).toBe(runsBefore + 1);
    } else {
      expect(result.statusCode).toBe(403);
      expect(body).toMatchObject({ code: 'forbidden', message: expected[caller] });
      expect(handlerRuns).toBe(runsBefore);
    }
  });
});
