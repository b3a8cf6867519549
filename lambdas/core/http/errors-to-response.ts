import { ServiceError, STATUS_OF } from '../errors';

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

/** Maps anything thrown to a ServiceError a client may see; unexpected errors become `internal`. */
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

export const errorBody = (error: ServiceError, requestId: string) => ({
  code: error.code,
  message: error.message,
  request_id: requestId,
  ...(error.code === 'validation' ? { details: error.details ?? [] } : {}),
});

export const isServerError = (error: ServiceError): boolean => STATUS_OF[error.code] >= 500;
