import { tokenVerifier } from '../../core/auth';
import { forbidden, isServerError, toServiceError } from '../../core/errors';
import { logger } from '../../core/logger';
import { type WebSocketRouteEvent, webSocketRoute } from '../../core/websocket-route';
import { realtimeSettings } from '../../domain/realtime/config';
import { openConnection } from '../../domain/realtime/lifecycle';
import { armAuthDeadline } from '../../domain/realtime/sweeper';
import { requestWelcome } from '../../domain/realtime/welcome';

interface ConnectEvent extends WebSocketRouteEvent {
  readonly queryStringParameters?: Readonly<Record<string, string | undefined>> | null;
}

/** Opens the connection: authenticated with `token`, or without one, to authenticate by an `auth` frame in time. */
const connect = async (connectionId: string, token: string | undefined): Promise<void> => {
  if (token === undefined || token === '') {
    await openConnection(connectionId);
    await armAuthDeadline(connectionId, Math.ceil(realtimeSettings().authTimeoutSecs));
    return;
  }
  const principal = await tokenVerifier().verify(token);
  if (principal.kind !== 'user') throw forbidden('Only user tokens may connect');
  const sessionId = await openConnection(connectionId, principal);
  await requestWelcome({ connection_id: connectionId, session_id: sessionId, user_id: principal.id });
};

/**
 * `$connect`: `?token=` must be a valid user token (invalid → 401, a service token → 403, which fails the
 * handshake); without a token the connection opens unauthenticated and must send `auth` in time.
 * API Gateway forbids posting from this integration, so the `session` frame goes out from the welcome worker.
 * A failure is answered with the status and code HTTP would answer it with (core/errors.ts `toServiceError`): a
 * dependency down or throttling fails the handshake with 503 `unavailable`.
 */
export const handler = webSocketRoute(async (event: ConnectEvent) => {
  try {
    await connect(event.requestContext.connectionId, event.queryStringParameters?.token);
    return { statusCode: 200 };
  } catch (error) {
    const refusal = toServiceError(error);
    if (isServerError(refusal)) logger.error('connect failed', { error: error as Error });
    return {
      statusCode: refusal.status,
      body: JSON.stringify({ code: refusal.code, message: refusal.message }),
    };
  }
});
