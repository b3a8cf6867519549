import type { FunctionSpec } from '../../lib/wiring';

/** A declared function (HTTP route, WebSocket route, worker or schedule) the local runtime can invoke. */
export type FunctionRef = FunctionSpec & { readonly id: string };

/**
 * Invokes a function's handler as Lambda would (fresh context, request id, timeout) and returns its result.
 * Stand-ins (gateways, SQS event source mappings, schedules) receive one of these instead of importing handlers.
 */
export type InvokeFunction = (fn: FunctionRef, event: unknown, options?: InvokeOptions) => Promise<unknown>;

export interface InvokeOptions {
  /** The invocation's `awsRequestId`: Lambda keeps one request id across the retries of an asynchronous event. */
  readonly requestId?: string;
}
