import { request } from 'node:http';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metering } from '../../local/lambda/runner';
import { fixtureWiring } from '../support/fixtures/wiring';
import { type Runtime, startTestRuntime } from '../support/runtime';

let runtime: Runtime;

beforeAll(async () => {
  runtime = await startTestRuntime({ wiring: fixtureWiring });
});
afterAll(() => runtime?.stop());

interface Echo {
  event: APIGatewayProxyEventV2;
  context: {
    awsRequestId: string;
    functionName: string;
    memoryLimitInMB: string;
    invokedFunctionArn: string;
    remainingMs: number;
  };
}

/** A raw request, so repeated headers and cookies reach the server exactly as written. */
const rawRequest = (
  method: string,
  path: string,
  headers: [string, string][],
  body?: Buffer,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> =>
  new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: runtime.port, method, path, headers: headers.flat() as unknown as string[] },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });

const postResult = (result: unknown) =>
  fetch(`${runtime.httpUrl}/result`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ result }),
  });

describe('HTTP API payload format 2.0 event', () => {
  it('carries the request as API Gateway builds it', async () => {
    const response = await rawRequest('GET', '/api/v1/echo/a%20b?x=1&tag=one&tag=two&empty=&q=a%2Bb+c', [
      ['Host', `127.0.0.1:${runtime.port}`],
      ['X-Custom', 'first'],
      ['X-Custom', 'second'],
      ['Cookie', 'session=abc; theme=dark'],
      ['User-Agent', 'runtime-test/1.0'],
    ]);
    expect(response.status).toBe(200);
    const { event } = JSON.parse(response.body.toString('utf8')) as Echo;
    expect(event.version).toBe('2.0');
    expect(event.routeKey).toBe('GET /api/v1/echo/{id}');
    expect(event.rawPath).toBe('/api/v1/echo/a%20b');
    expect(event.rawQueryString).toBe('x=1&tag=one&tag=two&empty=&q=a%2Bb+c');
    expect(event.queryStringParameters).toEqual({ x: '1', tag: 'one,two', empty: '', q: 'a+b c' });
    expect(event.pathParameters).toEqual({ id: 'a b' });
    expect(event.headers['x-custom']).toBe('first,second');
    expect(event.headers['user-agent']).toBe('runtime-test/1.0');
    expect(Object.keys(event.headers).every((name) => name === name.toLowerCase())).toBe(true);
    expect(event.headers.cookie).toBeUndefined();
    expect(event.cookies).toEqual(['session=abc', 'theme=dark']);
    expect(event.body).toBeUndefined();
    expect(event.isBase64Encoded).toBe(false);
    const context = event.requestContext;
    expect(context.routeKey).toBe('GET /api/v1/echo/{id}');
    expect(context.stage).toBe('$default');
    expect(context.http).toEqual({
      method: 'GET',
      path: '/api/v1/echo/a b',
      protocol: 'HTTP/1.1',
      sourceIp: '127.0.0.1',
      userAgent: 'runtime-test/1.0',
    });
    expect(context.domainName).toBe(`127.0.0.1:${runtime.port}`);
    expect(context.requestId).toMatch(/^[A-Za-z0-9=]{16}$/);
    expect(context.time).toMatch(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/);
    expect(typeof context.timeEpoch).toBe('number');
    expect(response.headers['apigw-requestid']).toBe(context.requestId);
  });

  it('keeps query keys and header names that are also the names of every object’s properties', async () => {
    const response = await rawRequest('GET', '/api/v1/echo/x?__proto__=p&constructor=c&toString=t', [
      ['Host', `127.0.0.1:${runtime.port}`],
      ['Constructor', 'h'],
    ]);
    expect(response.status).toBe(200);
    const { event } = JSON.parse(response.body.toString('utf8')) as Echo;
    expect(Object.entries(event.queryStringParameters ?? {}).sort()).toEqual(
      [
        ['__proto__', 'p'],
        ['constructor', 'c'],
        ['toString', 't'],
      ].sort(),
    );
    expect(Object.hasOwn(event.headers, 'constructor') && event.headers.constructor).toBe('h');
  });

  it('omits query, path parameters and cookies when the request has none', async () => {
    const response = await fetch(`${runtime.httpUrl}/echo/literal`);
    const { event } = (await response.json()) as Echo;
    expect(event.routeKey).toBe('GET /api/v1/echo/literal');
    expect(event.rawQueryString).toBe('');
    expect(event).not.toHaveProperty('queryStringParameters');
    expect(event).not.toHaveProperty('pathParameters');
    expect(event).not.toHaveProperty('cookies');
  });

  it('passes JSON bodies as text and other bodies base64-encoded', async () => {
    const json = await fetch(`${runtime.httpUrl}/echo/1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: '{"hello":"wörld"}',
    });
    const jsonEvent = ((await json.json()) as Echo).event;
    expect(jsonEvent.body).toBe('{"hello":"wörld"}');
    expect(jsonEvent.isBase64Encoded).toBe(false);

    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    const binary = await fetch(`${runtime.httpUrl}/echo/1`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: bytes,
    });
    const binaryEvent = ((await binary.json()) as Echo).event;
    expect(binaryEvent.isBase64Encoded).toBe(true);
    expect(Buffer.from(binaryEvent.body ?? '', 'base64')).toEqual(bytes);
  });

  it('routes several path parameters', async () => {
    const response = await fetch(`${runtime.httpUrl}/things/t1/parts/p%2F2`, { method: 'POST' });
    const { event } = (await response.json()) as Echo;
    expect(event.routeKey).toBe('POST /api/v1/things/{thing_id}/parts/{part_id}');
    expect(event.pathParameters).toEqual({ thing_id: 't1', part_id: 'p/2' });
  });
});

describe('Lambda context', () => {
  it('gives each invocation a request id, the declared memory and the remaining time', async () => {
    const first = (await (await fetch(`${runtime.httpUrl}/echo/1`)).json()) as Echo;
    const second = (await (await fetch(`${runtime.httpUrl}/echo/2`)).json()) as Echo;
    expect(first.context.awsRequestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(second.context.awsRequestId).not.toBe(first.context.awsRequestId);
    expect(first.context.functionName).toBe('notify-local-echo-get');
    expect(first.context.memoryLimitInMB).toBe('512');
    expect(first.context.invokedFunctionArn).toBe(
      'arn:aws:lambda:us-east-1:000000000000:function:notify-local-echo-get',
    );
    expect(first.context.remainingMs).toBeGreaterThan(0);
    expect(first.context.remainingMs).toBeLessThanOrEqual(7000);
  });

  it('meters the init once and every invocation', async () => {
    await fetch(`${runtime.httpUrl}/echo/literal`);
    await fetch(`${runtime.httpUrl}/echo/literal`);
    const meter = metering.snapshot()['echo.literal'];
    expect(meter?.initMs).toBeTypeOf('number');
    expect(meter?.invocations).toBeGreaterThanOrEqual(2);
  });
});

describe('routing', () => {
  it('answers an unknown path with 404 in the contract error format', async () => {
    const response = await fetch(`${runtime.httpUrl}/nope`, { headers: { 'x-request-id': 'req-123' } });
    expect(response.status).toBe(404);
    expect(response.headers.get('x-request-id')).toBe('req-123');
    expect(await response.json()).toEqual({ code: 'not_found', message: 'Not found', request_id: 'req-123' });
  });

  it('answers paths outside /api/v1 with 404 too', async () => {
    const response = await fetch(`http://127.0.0.1:${runtime.port}/elsewhere`);
    expect(response.status).toBe(404);
    const body = (await response.json()) as { code: string; request_id: string };
    expect(body.code).toBe('not_found');
    expect(response.headers.get('x-request-id')).toBe(body.request_id);
  });

  it('answers a known path with a wrong method with 405', async () => {
    const response = await fetch(`${runtime.httpUrl}/result`, { method: 'GET' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    const body = (await response.json()) as { code: string; request_id: string };
    expect(body.code).toBe('method_not_allowed');
    expect(body.request_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses bodies over API Gateway 10 MB payload limit', async () => {
    const response = await fetch(`${runtime.httpUrl}/echo/1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'x'.repeat(10 * 1024 * 1024 + 1),
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as { code: string }).code).toBe('payload_too_large');
  });
});

describe('result mapping', () => {
  it('takes statusCode, headers, cookies and body from a structured result', async () => {
    const response = await postResult({
      statusCode: 201,
      headers: { 'X-Thing': 'yes', 'content-type': 'text/plain' },
      cookies: ['a=1; Path=/', 'b=2; HttpOnly'],
      body: 'created',
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('x-thing')).toBe('yes');
    expect(response.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; HttpOnly']);
    expect(await response.text()).toBe('created');
  });

  it('decodes a base64 body', async () => {
    const bytes = Buffer.from([1, 2, 3, 254]);
    const response = await postResult({
      statusCode: 200,
      headers: { 'content-type': 'application/octet-stream' },
      body: bytes.toString('base64'),
      isBase64Encoded: true,
    });
    expect(Buffer.from(await response.arrayBuffer())).toEqual(bytes);
  });

  it('turns a result without statusCode into a 200 JSON response', async () => {
    const response = await postResult({ hello: 'world' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ hello: 'world' });
  });

  it('answers a malformed result with 500', async () => {
    const response = await postResult({ statusCode: 'two hundred' });
    expect(response.status).toBe(500);
    expect(((await response.json()) as { code: string }).code).toBe('internal');
  });

  it('answers a crashing handler with a contract 500 and no internals', async () => {
    const response = await fetch(`${runtime.httpUrl}/crash`);
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ code: 'internal', message: 'Internal error' });
    expect(text).not.toContain('fixture crash');
  });

  it('cuts a handler at its declared timeout', async () => {
    const response = await fetch(`${runtime.httpUrl}/slow`);
    expect(response.status).toBe(500);
    expect(metering.snapshot().slow?.timeouts).toBe(1);
  });
});
