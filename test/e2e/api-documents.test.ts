import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../lib/paths';
import { apiClient } from '../support/api';
import { asyncApiProblems, openApiProblems } from '../support/api-conformance';
import { type Runtime, startTestRuntime } from '../support/runtime';

let runtime: Runtime;
beforeAll(async () => {
  runtime = await startTestRuntime();
});
afterAll(() => runtime?.stop());

const api = apiClient(() => runtime.httpUrl);

describe('GET /api/v1/openapi.json', () => {
  it('serves the committed OpenAPI document without a token', async () => {
    const committed = JSON.parse(await readFile(join(repoRoot, 'docs/api/openapi.json'), 'utf8'));
    const { status, body } = await api('GET', '/openapi.json');
    expect(status).toBe(200);
    expect(body).toEqual(committed);
  });
});

// The checks the shared helpers run on every response and frame: they must catch drift, not wave it through.
describe('conformance checks (test/support/api-conformance.ts)', () => {
  const received = async (method: string, path: string, token?: string, body?: unknown) => {
    const response = await fetch(`${runtime.httpUrl}${path}`, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { method, path, status: response.status, headers: response.headers, text: await response.text() };
  };

  it('reject a response with a field the document does not describe, or without one it requires', async () => {
    const token = await runtime.mintUserToken('conformance-user');
    const response = await received('GET', '/notifications/unread-count', token);
    expect(openApiProblems(response)).toEqual([]);
    const added = { ...response, text: JSON.stringify({ ...JSON.parse(response.text), extra: 1 }) };
    expect(openApiProblems(added).join()).toMatch(/additional properties/);
    expect(openApiProblems({ ...response, text: '{}' }).join()).toMatch(/required property 'count'/);
  });

  it('reject a status the route does not document, and check error bodies too', async () => {
    const response = await received('GET', '/notifications/unread-count');
    expect(response.status).toBe(401);
    expect(openApiProblems(response)).toEqual([]);
    expect(openApiProblems({ ...response, status: 409 }).join()).toMatch(/status not documented/);
    const renamed = JSON.stringify({ ...JSON.parse(response.text), requestId: 'x', request_id: undefined });
    expect(openApiProblems({ ...response, text: renamed }).join()).toMatch(/request_id/);
    const unknownPath = await received('GET', '/no-such-thing');
    expect(unknownPath.status).toBe(404);
    expect(openApiProblems(unknownPath)).toEqual([]);
  });

  it('reject a frame of a known type with a missing, renamed or extra field', () => {
    const frame = { type: 'heartbeat.ack' };
    expect(asyncApiProblems(frame)).toEqual([]);
    expect(asyncApiProblems({ ...frame, extra: true }).join()).toMatch(/additional properties/);
    expect(asyncApiProblems({ type: 'session', session_id: 's', user_id: 'u' }).join()).toMatch(
      /heartbeat_interval_ms/,
    );
    expect(asyncApiProblems({ type: 'announcement', text: 'a broadcast payload' })).toEqual([]);
    expect(asyncApiProblems({ text: 'no type' })).not.toEqual([]);
    const gatewayError = { message: 'Internal server error', connectionId: 'c', requestId: 'r' };
    expect(asyncApiProblems(gatewayError)).toEqual([]);
    expect(asyncApiProblems({ ...gatewayError, requestId: undefined }).join()).toMatch(/requestId/);
  });
});
