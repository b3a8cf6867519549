import { tokenVerifier } from '../../core/auth';
import { withMetrics } from '../../core/metrics';
import { postFrame } from '../../domain/realtime/deliver';
import { handleClientFrame } from '../../domain/realtime/operations';

/** The parts of an API Gateway WebSocket MESSAGE event the handlers use. */
export interface WebSocketMessageEvent {
  readonly requestContext: { readonly connectionId: string; readonly routeKey: string };
  readonly body?: string | null;
  readonly isBase64Encoded?: boolean;
}

/**
 * The handler of every frame route: answers go out through `@connections` (not as route responses), so each
 * route is one-way and the same code serves AWS and the local gateway.
 */
export const frameHandler = withMetrics(
  async (event: WebSocketMessageEvent): Promise<{ statusCode: number }> => {
    const { connectionId, routeKey } = event.requestContext;
    const body =
      event.isBase64Encoded && event.body ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
    await handleClientFrame(routeKey, body, {
      connectionId,
      send: (frame) => postFrame(connectionId, frame),
      verifyToken: (token) => tokenVerifier().verify(token),
    });
    return { statusCode: 200 };
  },
);
