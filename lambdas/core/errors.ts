/**
 * Typed errors that domain code throws; the HTTP plumbing maps each to a row of contract §3's error table
 * and the WebSocket handlers to an `error` frame. Messages are written for clients: never an internal name.
 */
import type { ErrorCode, FieldIssue } from '../../common/error-body';

export type { ErrorCode, FieldIssue };

export const STATUS_OF: Record<ErrorCode, number> = {
  validation: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
};

export class ServiceError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: readonly FieldIssue[],
    /** Extra response headers, e.g. `Retry-After`. */
    readonly headers?: Readonly<Record<string, string>>,
  ) {
    super(message);
    this.name = 'ServiceError';
  }

  get status(): number {
    return STATUS_OF[this.code];
  }
}

export const validationError = (message: string, details: readonly FieldIssue[] = []) =>
  new ServiceError('validation', message, details);
/** The one refusal of a cursor a listing did not issue, whichever the listing. */
export const invalidCursor = () =>
  validationError('Invalid query string', [{ field: 'cursor', issue: 'not a cursor of this listing' }]);
export const unauthorized = (message = 'A valid bearer token is required') =>
  new ServiceError('unauthorized', message, undefined, { 'WWW-Authenticate': 'Bearer' });
export const forbidden = (message = 'Not allowed') => new ServiceError('forbidden', message);
export const notFound = (message = 'Not found') => new ServiceError('not_found', message);
export const conflict = (message: string) => new ServiceError('conflict', message);
export const unavailable = (message = 'A dependency is unavailable, try again later') =>
  new ServiceError('unavailable', message);

/** AWS SDK errors that mean "a dependency is down or throttling": the client may retry (503). */
const UNAVAILABLE_NAMES = new Set([
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'ThrottlingException',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'InternalServerError',
  'InternalFailure',
  'TimeoutError',
]);
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND']);

/**
 * Maps anything thrown to a ServiceError a client may see, the one mapping of HTTP routes, WebSocket frames and
 * `$connect`: a dependency down or throttling is `unavailable`, anything unexpected `internal`.
 */
export const toServiceError = (error: unknown): ServiceError => {
  if (error instanceof ServiceError) return error;
  const { name, code } = (error ?? {}) as { name?: string; code?: string };
  if ((name && UNAVAILABLE_NAMES.has(name)) || (code && UNAVAILABLE_CODES.has(code))) {
    return new ServiceError('unavailable', 'A dependency is unavailable, try again later', undefined, {
      'Retry-After': '1',
    });
  }
  return new ServiceError('internal', 'Internal error');
};

/** Answered 5xx: the service's fault or a dependency's, logged with the error where it is answered. */
export const isServerError = (error: ServiceError): boolean => error.status >= 500;
