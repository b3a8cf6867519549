import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { conflict } from '../../../../lambdas/core/errors';
import { httpRoute, MAX_BODY_BYTES } from '../../../../lambdas/core/http/route';
import { logger } from '../../../../lambdas/core/logger';
import { envNames, type HttpRoute } from '../../../../lib/wiring';
import { recordFunctionLogs } from '../../../support/function-logs';
import { authEnvFor, serviceToken, TEST_HS256_SECRET, userToken } from '../../../support/tokens';

const route = (access: HttpRoute['access']): HttpRoute => ({
  id: 'test.route',
  method: 'POST',
  path: '/things',
  handler: 'unused.ts',
  access,
});

const event = (overrides: Partial<APIGatewayProxyEventV2> = {}): APIGatewayProxyEventV2 =>
  ({
    version: '2.0',
    routeKey: 'POST /api/v1/things',
    rawPath: '/api/v1/things',
    rawQueryString: '',
    headers: { 'content-type': 'application/json' },
    isBase64Encoded: false,
    requestContext: { requestId: 'apigw-1', http: { method: 'POST', path: '/api/v1/things' } },
    ...overrides,
  }) as APIGatewayProxyEventV2;

const context = { awsRequestId: 'lambda-1', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;

const thingSchema = z.strictObject({ name: z.string().min(1), tags: z.array(z.string().max(3)).default([]) });
const echo = httpRoute(
  route({ users: 'any', services: 'notifications:write' }),
  { body: thingSchema },
  async (req) => ({
    status: 201,
    body: { principal: `${req.principal.kind}:${req.principal.id}`, thing: req.body },
  }),
);

type RouteHandler = ReturnType<typeof httpRoute>;
const call = async (handler: RouteHandler, overrides: Partial<APIGatewayProxyEventV2>) => {
  const result = (await handler(
    event(overrides),
    context as Parameters<RouteHandler>[1],
  )) as APIGatewayProxyStructuredResultV2;
  return { ...result, json: result.body ? JSON.parse(result.body) : undefined };
};

let userAuth: string;
let serviceAuth: string;
const saved = { ...process.env };

beforeAll(async () => {
  Object.assign(process.env, authEnvFor(undefined));
  userAuth = `Bearer ${await userToken(TEST_HS256_SECRET, { sub: 'alice' })}`;
  serviceAuth = `Bearer ${await serviceToken(TEST_HS256_SECRET, { sub: 'billing', scope: 'notifications:write' })}`;
});
afterAll(() => {
  process.env = saved;
});

const withAuth = (authorization: string, body: unknown, headers: Record<string, string> = {}) => ({
  headers: { 'content-type': 'application/json', authorization, ...headers },
  body: JSON.stringify(body),
});

describe('HTTP plumbing', () => {
  it('runs the handler with the principal and the validated body (defaults applied)', async () => {
    const response = await call(echo, withAuth(userAuth, { name: 'a' }));
    expect(response.statusCode).toBe(201);
    expect(response.json).toEqual({ principal: 'user:alice', thing: { name: 'a', tags: [] } });
    expect(response.headers?.['Content-Type']).toBe('application/json');
  });

  it('echoes a sane X-Request-Id and replaces an insane one with a UUID v7', async () => {
    const echoed = await call(echo, withAuth(userAuth, { name: 'a' }, { 'x-request-id': 'req-123' }));
    expect(echoed.headers?.['X-Request-Id']).toBe('req-123');
    const replaced = await call(echo, withAuth(userAuth, { name: 'a' }, { 'x-request-id': 'x'.repeat(129) }));
    expect(replaced.headers?.['X-Request-Id']).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    const failed = await call(echo, { headers: { 'x-request-id': 'req-err' } });
    expect(failed.headers?.['X-Request-Id']).toBe('req-err');
    expect(failed.json.request_id).toBe('req-err');
  });

  it('answers 401 with WWW-Authenticate for a missing, malformed or bad token', async () => {
    for (const authorization of [undefined, 'Basic abc', 'Bearer not.a.jwt']) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (authorization) headers.authorization = authorization;
      const response = await call(echo, { headers, body: '{"name":"a"}' });
      expect(response.statusCode).toBe(401);
      expect(response.json.code).toBe('unauthorized');
      expect(response.headers?.['WWW-Authenticate']).toBe('Bearer');
    }
  });

  it('answers 403 for a principal of the wrong kind or without the scope', async () => {
    const servicesOnly = httpRoute(route({ services: 'events:publish' }), {}, async () => ({ status: 204 }));
    expect((await call(servicesOnly, withAuth(userAuth, {}))).statusCode).toBe(403);
    expect((await call(servicesOnly, withAuth(serviceAuth, {}))).json.code).toBe('forbidden');
    const adminsOnly = httpRoute(route({ users: 'admin' }), {}, async () => ({ status: 204 }));
    expect((await call(adminsOnly, withAuth(userAuth, {}))).statusCode).toBe(403);
    const admin = `Bearer ${await userToken(TEST_HS256_SECRET, { sub: 'root', roles: ['admin'] })}`;
    expect((await call(adminsOnly, withAuth(admin, {}))).statusCode).toBe(204);
  });

  it('answers 400 with field details for malformed JSON, wrong types and unknown fields', async () => {
    const malformed = await call(echo, {
      headers: { 'content-type': 'application/json', authorization: userAuth },
      body: '{"name":',
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json).toMatchObject({
      code: 'validation',
      details: [{ field: '(body)', issue: 'malformed JSON' }],
    });
    const invalid = await call(echo, withAuth(userAuth, { name: 5, tags: ['ok', 'toolong'], extra: true }));
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json.details).toEqual(
      expect.arrayContaining([
        { field: 'name', issue: expect.any(String) },
        { field: 'tags[1]', issue: expect.any(String) },
        { field: 'extra', issue: 'unknown field' },
      ]),
    );
  });

  it('answers 413 over 256 KiB and 415 for a body that is not JSON', async () => {
    const big = await call(echo, withAuth(userAuth, { name: 'x'.repeat(MAX_BODY_BYTES) }));
    expect(big.statusCode).toBe(413);
    expect(big.json.code).toBe('payload_too_large');
    const text = await call(echo, {
      headers: { 'content-type': 'text/plain', authorization: userAuth },
      body: 'name=a',
    });
    expect(text.statusCode).toBe(415);
    expect(text.json.code).toBe('unsupported_media_type');
  });

  it('maps domain errors to their status and hides unexpected ones behind 500 internal', async () => {
    const conflicting = httpRoute(route({ users: 'any' }), {}, async () => {
      throw conflict('already there');
    });
    expect(await call(conflicting, withAuth(userAuth, {}))).toMatchObject({ statusCode: 409 });
    const logs = recordFunctionLogs();
    const crashing = httpRoute(route({ users: 'any' }), {}, async () => {
      throw new TypeError('secret internals at /var/task/index.js');
    });
    const crashed = await call(crashing, withAuth(userAuth, {}));
    expect(crashed.statusCode).toBe(500);
    expect(crashed.json).toEqual({
      code: 'internal',
      message: 'Internal error',
      request_id: expect.any(String),
    });
    expect(crashed.body).not.toContain('/var/task');
    // What the answer hides is logged, under the request id the caller was given.
    expect(logs.at('ERROR')).toEqual([
      expect.objectContaining({
        message: 'request failed',
        request_id: crashed.json.request_id,
        error: expect.objectContaining({ message: 'secret internals at /var/task/index.js' }),
      }),
    ]);
    const down = httpRoute(route({ users: 'any' }), {}, async () => {
      throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    });
    const unavailable = await call(down, withAuth(userAuth, {}));
    expect(unavailable.statusCode).toBe(503);
    expect(unavailable.headers?.['Retry-After']).toBeDefined();
    expect(logs.at('ERROR')[1]).toMatchObject({ error: { message: 'connect ECONNREFUSED' } });
  });

  it('logs one structured line per request with route, principal and latency, never the token', async () => {
    const lines: string[] = [];
    logger.setLogLevel('INFO');
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const consoleSpy = vi.spyOn(console, 'info').mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(' '));
    });
    try {
      await call(echo, withAuth(userAuth, { name: 'a' }));
    } finally {
      spy.mockRestore();
      consoleSpy.mockRestore();
    }
    const log = lines.map((line) => line.trim()).find((line) => line.includes('"message":"request"'));
    expect(log).toBeDefined();
    const entry = JSON.parse(log!);
    expect(entry).toMatchObject({ route: 'test.route', status: 201, principal: 'user:alice' });
    expect(typeof entry.latency_ms).toBe('number');
    expect(entry.request_id).toBeDefined();
    expect(lines.join('\n')).not.toContain(userAuth.slice(7));
  });

  it('does not carry one request’s principal into the next request’s log', async () => {
    const lines: string[] = [];
    logger.setLogLevel('INFO');
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      await call(echo, withAuth(userAuth, { name: 'a' }));
      await call(echo, { headers: { 'content-type': 'application/json' }, body: '{}' });
    } finally {
      spy.mockRestore();
    }
    const last = JSON.parse(lines.filter((line) => line.includes('"message":"request"')).at(-1)!);
    expect(last.status).toBe(401);
    expect(last.principal).toBeUndefined();
  });

  it('takes a declared route’s access rule from the function’s environment, and refuses every request without it', async () => {
    const byId = httpRoute('test.byid', {}, async (req) => ({
      status: 200,
      body: { who: req.principal.id },
    }));
    const variable = envNames.routeAccess;
    const logs = recordFunctionLogs();
    try {
      delete process.env[variable];
      expect((await call(byId, withAuth(userAuth, {}))).statusCode).toBe(500);
      process.env[variable] = JSON.stringify({ id: 'another.route', access: { public: true } });
      expect((await call(byId, withAuth(userAuth, {}))).statusCode).toBe(500);
      // The operator learns why from the log.
      expect(logs.at('ERROR').map((record) => (record.error as { message?: string }).message)).toEqual([
        `${variable} is not set: route test.byid is not wired to this function`,
        `${variable} declares route another.route, not test.byid`,
      ]);
      process.env[variable] = JSON.stringify({ id: 'test.byid', access: { services: 'webhooks:admin' } });
      // Read once: the rule holds for the instance's life.
      expect((await call(byId, withAuth(userAuth, {}))).statusCode).toBe(403);
      process.env[variable] = JSON.stringify({ id: 'test.byid', access: { public: true } });
      expect((await call(byId, withAuth(userAuth, {}))).statusCode).toBe(403);
    } finally {
      delete process.env[variable];
    }
    const user = httpRoute('test.user', {}, async (req) => ({
      status: 200,
      body: { who: req.principal.id },
    }));
    process.env[variable] = JSON.stringify({ id: 'test.user', access: { users: 'any' } });
    try {
      const answer = await call(user, withAuth(userAuth, {}));
      expect(answer.statusCode).toBe(200);
      expect(answer.json).toEqual({ who: 'alice' });
    } finally {
      delete process.env[variable];
    }
  });
});
