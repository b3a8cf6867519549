import { queueUrl } from '../../core/clients';
import { sendAll } from '../../core/sqs-send';
import { postFrame } from './deliver';
import { claimWelcome, getConnection, releaseWelcome, sessionFrameOf } from './lifecycle';

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
 * Waits before posting the `session` frame again after a 410. `$connect` queues the welcome before it answers, and
 * API Gateway opens the socket only after that (a post before it is answered 410, like one to a closed
 * connection): the worker may come first. ≈ 2.7 s in all, within the worker's 5 s.
 */
const OPENING_RETRY_MS = [100, 200, 400, 800, 1_200] as const;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

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
  const frame = sessionFrameOf(session);
  if ((await postFrame(request.connection_id, frame)) === 'sent') return;
  for (const waitMs of OPENING_RETRY_MS) {
    await sleep(waitMs);
    if ((await postFrame(request.connection_id, frame)) === 'sent') return;
  }
  // Still 410 after seconds: closed, or not open yet. The claim goes back, so that a frame from the client sends
  // the session frame (operations.ts) or the queue's next receive does, while the connection is there.
  await releaseWelcome(request.connection_id, session.session_id);
  if (await getConnection(request.connection_id)) {
    throw new Error(
      `the session frame of connection ${request.connection_id} was refused (410); retried later`,
    );
  }
};
