import type { ServiceError } from '../errors';

export const errorBody = (error: ServiceError, requestId: string) => ({
  code: error.code,
  message: error.message,
  request_id: requestId,
  ...(error.code === 'validation' ? { details: error.details ?? [] } : {}),
});
