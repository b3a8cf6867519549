/**
 * The error body of contract §3, shared by the functions (which answer with it) and the stack (whose WAF rule
 * answers `rate_limited` with a fixed copy of it). No imports: both sides bundle or load it as it is.
 */
export type ErrorCode =
  | 'validation'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal'
  | 'unavailable';

export interface FieldIssue {
  /** Path of the offending field, e.g. `recipient_ids[3]` or `channels`. */
  readonly field: string;
  readonly issue: string;
}

/** What a body is made of: a ServiceError (lambdas/core/errors.ts) or a fixed error of the stack. */
export interface ErrorFields {
  readonly code: ErrorCode;
  readonly message: string;
  readonly details?: readonly FieldIssue[];
}

export const errorBody = (error: ErrorFields, requestId: string) => ({
  code: error.code,
  message: error.message,
  request_id: requestId,
  ...(error.code === 'validation' ? { details: error.details ?? [] } : {}),
});
