import { type WebSocketRouteEvent, webSocketRoute } from '../../core/websocket-route';
import { postFrame } from '../../domain/realtime/deliver';
import { type FrameOperations, handleClientFrame } from '../../domain/realtime/operations';

/** The parts of an API Gateway WebSocket MESSAGE event the handlers use. */
export interface WebSocketMessageEvent extends WebSocketRouteEvent {
  readonly body?: string | null;
  readonly isBase64Encoded?: boolean;
}

/**
 * The handler of a frame route, serving the route's own operation (each route file names it, so its bundle
 * carries that operation's code alone): answers go out through `@connections` (not as route responses), so
 * each route is one-way and the same code serves AWS and the local gateway.
 */
export const frameHandler = (operations: FrameOperations) =>
  webSocketRoute(async (event: WebSocketMessageEvent): Promise<{ statusCode: number }> => {
    const { connectionId, routeKey } = event.requestContext;
    const body =
      event.isBase64Encoded && event.body ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
    await handleClientFrame(
      routeKey,
      body,
      { connectionId, send: (frame) => postFrame(connectionId, frame) },
      operations,
    );
    return { statusCode: 200 };
  });
