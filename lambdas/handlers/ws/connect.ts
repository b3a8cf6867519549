import type { Context } from 'aws-lambda';
import { tokenVerifier } from '../../core/auth';
import { ServiceError } from '../../core/errors';
import { beginInvocationLog, logger } from '../../core/logger';
import { realtimeSettings } from '../../domain/realtime/config';
import { openConnection } from '../../domain/realtime/lifecycle';
import { armAuthDeadline } from '../../domain/realtime/sweeper';
import { requestWelcome, type WelcomeRequest } from '../../domain/realtime/welcome';

interface ConnectEvent {
  readonly requestContext: { readonly connectionId: string };
  readonly queryStringParameters?: Readonly<Record<string, string | undefined>> | null;
}

const reject = (statusCode: number, code: string, message: string) => ({
  statusCode,
  body: JSON.stringify({ code, message }),
});

/**
 * `$connect`: `?token=` must be a valid user token (invalid → 401, a service token → 403, which fails the
 * handshake); without a token the connection opens unauthenticated and must send `auth` in time.
 * API Gateway forbids posting from this integration, so the `session` frame goes out from the welcome worker.
 */
export const handler = async (event: ConnectEvent, context: Context) => {
  const connectionId = event.requestContext.connectionId;
  beginInvocationLog(context, { route: '$connect', connection_id: connectionId });
  const token = event.queryStringParameters?.token;
  if (token === undefined || token === '') {
    await openConnection(connectionId);
    await armAuthDeadline(connectionId, Math.ceil(realtimeSettings().authTimeoutSecs));
    return { statusCode: 200 };
  }
  let welcome: WelcomeRequest;
  try {
    const principal = await tokenVerifier().verify(token);
    if (principal.kind !== 'user') return reject(403, 'forbidden', 'Only user tokens may connect');
    const sessionId = await openConnection(connectionId, principal);
    welcome = { connection_id: connectionId, session_id: sessionId, user_id: principal.id };
  } catch (error) {
    if (error instanceof ServiceError) return reject(error.status, error.code, error.message);
    logger.error('connect failed', { error: error as Error });
    return reject(500, 'internal', 'Something went wrong');
  }
  await requestWelcome(welcome);
  return { statusCode: 200 };
};
