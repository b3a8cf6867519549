import { ROUTES_BASE_PATH } from '../../lib/wiring/route-match';
import { assertDocumentedResponse } from './api-conformance';

/** Whether a base URL is the service's REST API (not, e.g., the demo's local-only endpoints). */
const isServiceApi = (base: string) => new URL(base).pathname.replace(/\/$/, '') === ROUTES_BASE_PATH;

/**
 * A small REST client for end-to-end tests: JSON in, status and parsed JSON out. Every response of the service's
 * REST API is checked against docs/api/openapi.json (api-conformance.ts): one the document does not describe throws.
 *
 *   const api = apiClient(() => runtime.httpUrl);
 *   const { status, body } = await api('POST', '/notifications', token, { ... }, { 'idempotency-key': 'k' });
 */
export const apiClient =
  (baseUrl: () => string) =>
  async (
    method: string,
    path: string,
    token?: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const base = baseUrl();
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        'content-type': 'application/json',
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (isServiceApi(base))
      assertDocumentedResponse({ method, path, status: response.status, headers: response.headers, text });
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

/** Polls `read` until `done` holds or the time is up, and returns the last value (the test asserts on it). */
export const eventually = async <T>(
  read: () => Promise<T> | T,
  done: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

/**
 * POSTs JSON text as it is, for bodies JSON.stringify cannot write (a 10,000-level nesting, `1e400`, a lone
 * surrogate escape); the answer is checked against the API document as apiClient's are.
 */
export const postJsonText = async (baseUrl: string, path: string, token: string, text: string) => {
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: text,
  });
  const answer = await response.text();
  assertDocumentedResponse({
    method: 'POST',
    path,
    status: response.status,
    headers: response.headers,
    text: answer,
  });
  return { status: response.status, body: JSON.parse(answer) };
};
