/**
 * The declared `$default` route: requests no route matches get the contract's 404, a known path with another
 * method a 405 with `Allow` computed from the declaration. Served through the local gateway on a real HTTP
 * server with the real Lambda runner, as API Gateway would route them.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envNames } from '../../common/env';
import { DEFAULT_ROUTE_PATH, type HttpRoute, wiring } from '../../lib/wiring';
import { allowedMethods, pathMatchesTemplate } from '../../lib/wiring/route-match';
import { createHttpGateway } from '../../local/gateway/http';
import { installFunctionEnvScopes, withFunctionEnv } from '../../local/lambda/function-env-scope';
import { createLambdaRunner, metering } from '../../local/lambda/runner';
import type { InvokeFunction } from '../../local/lambda/types';

const route = (method: HttpRoute['method'], path: string): HttpRoute => ({
  id: `${method} ${path}`,
  method,
  path,
  handler: 'unused.ts',
  access: { public: true },
});

describe('path templates of the declaration', () => {
  it('match one non-empty segment per parameter, under /api/v1 only', () => {
    expect(pathMatchesTemplate('/notifications/{receiver_id}/read', '/api/v1/notifications/abc/read')).toBe(
      true,
    );
    expect(pathMatchesTemplate('/notifications/{receiver_id}/read', '/api/v1/notifications//read')).toBe(
      false,
    );
    expect(pathMatchesTemplate('/notifications/{receiver_id}/read', '/notifications/abc/read')).toBe(false);
    expect(pathMatchesTemplate('/live', '/api/v1/live/extra')).toBe(false);
  });

  it('give the sorted methods of every route on a path, ignoring the catch-all', () => {
    const routes = [
      route('POST', '/items'),
      route('GET', '/items'),
      route('DELETE', '/items/{id}'),
      route('ANY', DEFAULT_ROUTE_PATH),
    ];
    expect(allowedMethods(routes, '/api/v1/items')).toEqual(['GET', 'POST']);
    expect(allowedMethods(routes, '/api/v1/items/7')).toEqual(['DELETE']);
    expect(allowedMethods(routes, '/api/v1/other')).toEqual([]);
  });
});

describe('the $default route behind the local gateway', () => {
  let server: Server;
  let base: string;
  let withCors: Server;
  let corsBase: string;
  const runner = createLambdaRunner();
  // Each route's function gets its route's access rule, as the CDK app and the local runtime give it.
  const invoke: InvokeFunction = (fn, event) => {
    const route = wiring.httpRoutes.find((candidate) => candidate.id === fn.id);
    const own: Record<string, string> = route
      ? { [envNames.routeAccess]: JSON.stringify({ id: route.id, access: route.access }) }
      : {};
    return withFunctionEnv(own, new Set(), () => runner(fn, event));
  };
  const listen = async (cors?: { allowedOrigins: string[] }) => {
    const gateway = createHttpGateway({
      routes: wiring.httpRoutes,
      invoke,
      ...(cors ? { cors } : {}),
    });
    const created = createServer((request, response) => void gateway.handle(request, response));
    await new Promise<void>((resolve) => created.listen(0, '127.0.0.1', resolve));
    return { created, url: `http://127.0.0.1:${(created.address() as AddressInfo).port}` };
  };
  let uninstallEnvScopes: () => void;
  beforeAll(async () => {
    uninstallEnvScopes = installFunctionEnvScopes();
    ({ created: server, url: base } = await listen());
    ({ created: withCors, url: corsBase } = await listen({ allowedOrigins: ['https://app.example.test'] }));
  });
  afterAll(async () => {
    for (const created of [server, withCors])
      await new Promise<void>((resolve) => created.close(() => resolve()));
    uninstallEnvScopes();
  });

  const preflight = (url: string) =>
    fetch(url, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.test',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
  const fallbackRuns = () => metering.functions.get('platform.fallback')?.invocations ?? 0;

  it('gets the CORS preflights no route matches (as on AWS) and answers them 204, so the browser proceeds', async () => {
    const before = fallbackRuns();
    const response = await preflight(`${corsBase}/api/v1/notifications`);
    expect(response.status).toBe(204);
    expect(fallbackRuns()).toBe(before + 1);
    // API Gateway adds its configured CORS headers to the function's answer.
    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example.test');
    expect(response.headers.get('access-control-allow-headers')).toContain('authorization');
    expect(response.headers.get('access-control-allow-methods')).toContain('POST');
    expect(await response.text()).toBe('');
  });

  it('answers a preflight 204 without CORS headers when the API has no CORS configuration (the browser refuses)', async () => {
    const response = await preflight(`${base}/api/v1/notifications`);
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('is declared once, as ANY $default, public', () => {
    const catchAll = wiring.httpRoutes.filter((candidate) => candidate.path === DEFAULT_ROUTE_PATH);
    expect(catchAll).toEqual([
      expect.objectContaining({ id: 'platform.fallback', method: 'ANY', access: { public: true } }),
    ]);
  });

  it('answers an unknown path with 404 not_found, echoing the request id', async () => {
    const response = await fetch(`${base}/api/v1/no/such/thing`, { headers: { 'X-Request-Id': 'req-404' } });
    expect(response.status).toBe(404);
    expect(response.headers.get('x-request-id')).toBe('req-404');
    expect(await response.json()).toEqual({ code: 'not_found', message: 'Not found', request_id: 'req-404' });
  });

  it('answers a declared path with another method with 405 and the declared methods in Allow', async () => {
    const path = '/api/v1/live';
    const expected = allowedMethods(wiring.httpRoutes, path);
    expect(expected).toEqual(['GET']);
    const response = await fetch(`${base}${path}`, {
      method: 'DELETE',
      headers: { 'content-type': 'text/plain' },
    });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET');
    const body = (await response.json()) as { code: string; message: string };
    expect(body.code).toBe('method_not_allowed');
    expect(body.message).toBe('DELETE is not allowed on this path');
  });

  it('answers 404, not 415 or 413, to an unknown path whatever body comes with it', async () => {
    const response = await fetch(`${base}/api/v1/unknown`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: Buffer.alloc(300 * 1024, 1),
    });
    expect(response.status).toBe(404);
    expect(((await response.json()) as { code: string }).code).toBe('not_found');
  });

  it('answers a preflight of a URL with a query string 204, and an unknown path with one 404', async () => {
    const preflighted = await preflight(`${corsBase}/api/v1/notifications?limit=20`);
    expect(preflighted.status).toBe(204);
    expect(preflighted.headers.get('access-control-allow-origin')).toBe('https://app.example.test');
    const unknown = await fetch(`${base}/api/v1/no/such/thing?x=1`);
    expect(unknown.status).toBe(404);
    const wrongMethod = await fetch(`${base}/api/v1/live?x=1`, { method: 'DELETE' });
    expect(wrongMethod.status).toBe(405);
  });

  it('leaves declared routes to their own functions', async () => {
    const response = await fetch(`${base}/api/v1/live`);
    expect(response.status).toBe(200);
  });
});
