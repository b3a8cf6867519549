/**
 * The HTTP API's CORS policy: one description that the CDK stack turns into the HttpApi's corsPreflight and
 * the local gateway applies itself (docs/deploy.md "CORS", docs/local-runtime.md). Only the allowed origins
 * are a stage setting (`cors.allowed_origins`); the rest follows from the API.
 */
import type { HttpMethod } from './types';

/** `allowed_origins` entry that allows every origin. Tokens travel in a header, never in cookies. */
export const ANY_ORIGIN = '*';

/** Request headers a page may send: the bearer token, JSON bodies, safe retries, its own correlation id. */
export const CORS_ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'idempotency-key',
  'x-request-id',
] as const;

/** Response headers a page may read besides the safelisted ones. */
export const CORS_EXPOSED_HEADERS = ['x-request-id', 'retry-after'] as const;

/**
 * Methods of the declared routes, and no other (`ANY` is the catch-all's, not a method a page sends;
 * test/unit/wiring.test.ts keeps the list equal to the routes' methods).
 */
export const CORS_ALLOWED_METHODS: readonly Exclude<HttpMethod, 'ANY'>[] = ['GET', 'POST', 'PUT', 'DELETE'];

/** How long a browser may reuse a preflight answer: Chromium's cap (Firefox allows a day). */
export const CORS_MAX_AGE_SECS = 7200;

export interface CorsPolicy {
  /** Exact origins (`https://app.example.com`), or [ANY_ORIGIN]. */
  readonly allowedOrigins: readonly string[];
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Why `origin` cannot be an `allowed_origins` entry, or undefined when it can: `*`, or a browser origin
 * (`scheme://host[:port]`, no path, no trailing slash) over https, or http on loopback for local pages.
 */
export const invalidOriginReason = (origin: string): string | undefined => {
  if (origin === ANY_ORIGIN) return undefined;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return `"${origin}" is not an origin like https://app.example.com`;
  }
  if (url.origin !== origin) {
    return `"${origin}" is not an origin: write it as ${url.origin === 'null' ? 'https://host[:port]' : url.origin} (scheme, host and port only, lower case, no trailing slash)`;
  }
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return `"${origin}": only https:// origins (http:// on localhost) are allowed`;
};

/** The `Access-Control-Allow-Origin` value for a request from `origin`, or undefined when it is not allowed. */
export const allowedOriginFor = (policy: CorsPolicy, origin: string | undefined): string | undefined => {
  if (!origin) return undefined;
  if (policy.allowedOrigins.includes(ANY_ORIGIN)) return ANY_ORIGIN;
  return policy.allowedOrigins.includes(origin) ? origin : undefined;
};

/** A CORS preflight as browsers send it: OPTIONS with Origin and Access-Control-Request-Method (lower-case names). */
export const isCorsPreflight = (
  method: string | undefined,
  headers: Readonly<Record<string, string | string[] | undefined>> | undefined,
): boolean =>
  method === 'OPTIONS' &&
  headers?.origin !== undefined &&
  headers['access-control-request-method'] !== undefined;
