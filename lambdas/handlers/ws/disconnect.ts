import { type WebSocketRouteEvent, webSocketRoute } from '../../core/websocket-route';
import { endConnection } from '../../domain/realtime/lifecycle';

/** `$disconnect` (best effort on AWS; the sweeper and 410 handling clean up when it never comes). */
export const handler = webSocketRoute(async (event: WebSocketRouteEvent) => {
  await endConnection(event.requestContext.connectionId, 'disconnect');
  return { statusCode: 200 };
});
