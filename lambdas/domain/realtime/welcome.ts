import { messageQueue } from '../../core/message-queue';
import { enqueue } from '../../core/sqs-send';
import * as z from '../../core/zod';
import { postFrame } from './deliver';
import { claimWelcome, endConnection, getConnection, releaseWelcome, sessionFrameOf } from './lifecycle';

/** A `wsWelcome` message: the connection and, from `$connect`, the session it opened (so no read is needed). */
const welcomeRequest = z.object({
  connection_id: z.string(),
  session_id: z.optional(z.string()),
  user_id: z.optional(z.string()),
});

export type WelcomeRequest = z.infer<typeof welcomeRequest>;

export const welcomeQueue = messageQueue('wsWelcome', welcomeRequest);

/** `$connect` cannot post to its own connection on AWS: the `session` frame is sent by the welcome worker. */
export const requestWelcome = (request: WelcomeRequest): Promise<void> => enqueue(welcomeQueue, [request]);

/**
 * Waits before posting the `session` frame again after a 410. `$connect` queues the welcome before it answers, and
 * API Gateway opens the socket only after that (a post before it is answered 410, like one to a closed
 * connection): the worker may come first. ≈ 2.7 s in all, within the worker's 5 s.
 */
const OPENING_RETRY_MS = [100, 200, 400, 800, 1_200] as const;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A connection still answered 410 this long after `$connect` is not opening: it closed without a `$disconnect`. */
const OPENING_MAX_MS = 15_000;

/** Time kept back from the invocation's deadline to give the claim back. */
const RELEASE_MARGIN_MS = 1_000;

/**
 * Sends the `session` frame of a connection authenticated at `$connect` (once, whoever claims it first). The
 * claim is conditional on the session the message names, so the message's copy of it is the connection's; a
 * message without it (queued before `$connect` named the session) reads the connection. `deadline`: when the
 * invocation ends (epoch ms); the retries stop in time to give the claim back.
 */
export const sendWelcome = async (
  request: WelcomeRequest,
  deadline = Number.POSITIVE_INFINITY,
): Promise<void> => {
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
    if (Date.now() + waitMs + RELEASE_MARGIN_MS > deadline) break;
    await sleep(waitMs);
    // A `reconnect` may have given the connection another session meanwhile: this frame would name a dead one.
    if ((await getConnection(request.connection_id))?.session_id !== session.session_id) return;
    if ((await postFrame(request.connection_id, frame)) === 'sent') return;
  }
  // Still 410: closed, or not open yet. The claim goes back, so that a frame from the client sends the session
  // frame (operations.ts) or the queue's next receive does, while the connection is there and opening.
  await releaseWelcome(request.connection_id, session.session_id);
  const connection = await getConnection(request.connection_id);
  if (!connection || connection.session_id !== session.session_id) return;
  if (Date.now() - connection.connected_at > OPENING_MAX_MS) {
    // Closed without a `$disconnect` (API Gateway's is best effort): ended as a delivery ends a gone connection.
    await endConnection(request.connection_id, 'gone');
    return;
  }
  throw new Error(
    `the session frame of connection ${request.connection_id} was refused (410); retried later`,
  );
};
