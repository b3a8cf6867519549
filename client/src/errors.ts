import type { ErrorBody } from './wire.js';

/**
 * Every failure the SDK reports: a REST error answer, an `error` frame, or a request that never got an answer.
 * `code` is the service's code (`validation`, `unauthorized`, `token_expired`, …) or the SDK's own `network`
 * (no answer) and `timeout`.
 */
export class NotifyError extends Error {
  override readonly name = 'NotifyError';
  constructor(
    readonly code: string,
    message: string,
    /** HTTP status; 0 for WebSocket errors and requests that got no answer. */
    readonly status = 0,
    /** The service's correlation id of the request (REST), for support tickets and logs. */
    readonly requestId?: string,
    /** `validation`: the offending fields. */
    readonly details?: ErrorBody['details'],
    /** From `Retry-After`, when the answer carried one. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}
