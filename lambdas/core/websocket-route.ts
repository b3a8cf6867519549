import type { Context } from 'aws-lambda';
import { beginInvocationLog } from './logger';
import { withMetrics } from './metrics';

/** What every WebSocket route's event carries (API Gateway's request context). */
export interface WebSocketRouteEvent {
  readonly requestContext: {
    readonly connectionId: string;
    readonly routeKey: string;
    readonly requestId?: string;
  };
}

/**
 * The wrapper of every WebSocket route's function, as `httpRoute` is of HTTP routes: this invocation's log keys
 * (the previous invocation's reset: Lambda reuses the process) and its counters flushed when it ends, whether it
 * succeeded or not. Errors are the route's own to answer: a frame's become `error` frames (operations.ts), and
 * `$connect`'s the handshake's status (handlers/ws/connect.ts).
 */
export const webSocketRoute = <E extends WebSocketRouteEvent, R>(handle: (event: E) => Promise<R>) =>
  withMetrics(async (event: E, context: Context): Promise<R> => {
    const { routeKey, connectionId, requestId } = event.requestContext;
    beginInvocationLog(context, {
      route: routeKey,
      connection_id: connectionId,
      ...(requestId === undefined ? {} : { request_id: requestId }),
    });
    return handle(event);
  });
