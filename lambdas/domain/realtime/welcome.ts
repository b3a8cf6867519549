import { queueUrl } from '../../core/clients';
import { sendAll } from '../../core/sqs-send';
import { postFrame } from './deliver';
import { claimWelcome, getConnection, sessionFrameOf } from './lifecycle';

/** A `wsWelcome` message: the connection and, from `$connect`, the session it opened (so no read is needed). */
export interface WelcomeRequest {
  readonly connection_id: string;
  readonly session_id?: string;
  readonly user_id?: string;
}

/** `$connect` cannot post to its own connection on AWS: the `session` frame is sent by the welcome worker. */
export const requestWelcome = (request: WelcomeRequest): Promise<void> =>
  sendAll(queueUrl('wsWelcome'), [JSON.stringify(request)]);

/**
 * Sends the `session` frame of a connection authenticated at `$connect` (once, whoever claims it first). The
 * claim is conditional on the session the message names, so the message's copy of it is the connection's; a
 * message without it (queued before `$connect` named the session) reads the connection.
 */
export const sendWelcome = async (request: WelcomeRequest): Promise<void> => {
  let session =
    request.session_id && request.user_id
      ? { session_id: request.session_id, user_id: request.user_id }
      : undefined;
  if (!session) {
    const connection = await getConnection(request.connection_id);
    if (!connection?.session_id || !connection.user_id || connection.welcomed) return;
    session = { session_id: connection.session_id, user_id: connection.user_id };
  }
  if (!(await claimWelcome(request.connection_id, session.session_id))) return;
  await postFrame(request.connection_id, sessionFrameOf(session));
};
