/**
 * CORS on the local HTTP gateway, as API Gateway applies an HttpApi's corsPreflight (docs/local-runtime.md):
 * preflights no route takes answered by the gateway, headers on every response to an allowed origin, the
 * function's own CORS headers ignored, and no CORS at all without a configuration.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CorsPolicy } from '../../lib/wiring';
import { type GatewayServer, startGatewayServer } from '../../local/gateway/server';
import { createLambdaRunner, metering } from '../../local/lambda/runner';
import { fixtureWiring } from '../support/fixtures/wiring';

const APP = 'https://app.example.test';
const OTHER = 'https://evil.example.test';

const gateways: GatewayServer[] = [];
const start = async (cors?: CorsPolicy) => {
  const gateway = await startGatewayServer({
    wiring: fixtureWiring,
    invoke: createLambdaRunner({ onError: () => {} }),
    stage: 'local',
    port: 0,
    ...(cors ? { cors } : {}),
  });
  gateway.open();
  gateways.push(gateway);
  return `http://127.0.0.1:${gateway.port}/api/v1`;
};

let listed: string;
let anyOrigin: string;
let none: string;
beforeAll(async () => {
  listed = await start({ allowedOrigins: [APP, 'http://localhost:5173'] });
  anyOrigin = await start({ allowedOrigins: ['*'] });
  none = await start();
});
afterAll(async () => {
  for (const gateway of gateways) await gateway.close();
});

/** A preflight as a browser sends it (fetch() refuses to send one itself). */
const preflight = (
  url: string,
  origin: string,
  method = 'POST',
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> =>
  new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': method,
          'access-control-request-headers': 'authorization,content-type,idempotency-key',
        },
      },
      (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => {
          body += chunk.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });

const invocations = () => metering.functions.get('result')?.invocations ?? 0;

describe('a gateway with cors.allowed_origins', () => {
  // The fixture wiring has no catch-all route: no route takes OPTIONS, so the gateway answers preflights itself
  // (with the service's `$default` route they reach its function instead: test/unit/fallback-route.test.ts).
  it('answers a preflight from a listed origin itself: 204, methods, headers, max age, no function run', async () => {
    const before = invocations();
    const response = await preflight(`${listed}/result`, APP);
    expect(response.status).toBe(204);
    expect(response.body).toBe('');
    expect(response.headers['access-control-allow-origin']).toBe(APP);
    expect(response.headers['access-control-allow-methods']).toBe('GET,POST,PUT,DELETE');
    expect(response.headers['access-control-allow-headers']).toBe(
      'authorization,content-type,idempotency-key,x-request-id',
    );
    expect(response.headers['access-control-max-age']).toBe('7200');
    expect(response.headers.vary).toBe('origin');
    expect(invocations()).toBe(before);
  });

  it('answers a preflight on any path, declared or not', async () => {
    expect((await preflight(`${listed}/no/such/route`, 'http://localhost:5173', 'DELETE')).status).toBe(204);
  });

  it('gives an unlisted origin no CORS headers, so its browser blocks the call', async () => {
    const response = await preflight(`${listed}/result`, OTHER);
    expect(response.status).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    expect(response.headers['access-control-allow-methods']).toBeUndefined();
    const call = await fetch(`${listed}/result`, {
      method: 'POST',
      headers: { origin: OTHER, 'content-type': 'application/json' },
      body: JSON.stringify({ result: { ok: true } }),
    });
    expect(call.status).toBe(200);
    expect(call.headers.get('access-control-allow-origin')).toBeNull();
  });

  it("adds Allow-Origin and Expose-Headers to the function's response and drops the function's own", async () => {
    const response = await fetch(`${listed}/result`, {
      method: 'POST',
      headers: { origin: APP, 'content-type': 'application/json' },
      body: JSON.stringify({
        result: {
          statusCode: 429,
          headers: {
            'retry-after': '3',
            'x-request-id': 'r-1',
            'access-control-allow-origin': '*',
            'access-control-allow-credentials': 'true',
          },
          body: '{}',
        },
      }),
    });
    expect(response.status).toBe(429);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP);
    expect(response.headers.get('access-control-expose-headers')).toBe('x-request-id,retry-after');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    expect(response.headers.get('retry-after')).toBe('3');
  });

  it("puts them on the gateway's own errors too, so a page can read the error body", async () => {
    const response = await fetch(`${listed}/nope`, { headers: { origin: APP } });
    expect(response.status).toBe(404);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP);
    expect(((await response.json()) as { code: string }).code).toBe('not_found');
  });
});

describe('a gateway allowing any origin (the local default)', () => {
  it('answers every origin with "*" and no Vary', async () => {
    const response = await preflight(`${anyOrigin}/result`, OTHER);
    expect(response.status).toBe(204);
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(response.headers.vary).toBeUndefined();
    const call = await fetch(`${anyOrigin}/echo/1`, { headers: { origin: OTHER } });
    expect(call.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('a gateway without CORS configuration', () => {
  it('routes a preflight like any request (405) and adds no CORS header, as an HttpApi without corsPreflight', async () => {
    const response = await preflight(`${none}/result`, APP);
    expect(response.status).toBe(405);
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    const call = await fetch(`${none}/echo/1`, { headers: { origin: APP } });
    expect(call.status).toBe(200);
    expect(call.headers.get('access-control-allow-origin')).toBeNull();
  });
});
