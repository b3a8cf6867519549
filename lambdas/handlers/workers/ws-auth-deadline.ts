import { sqsWorker } from '../../core/sqs-worker';
import { armAuthDeadline, enforceAuthDeadline } from '../../domain/realtime/sweeper';

/** Closes a connection still unauthenticated at its auth deadline (the timer `$connect` armed). */
export const handler = sqsWorker('ws.authDeadline', async (body) => {
  const { connection_id: connectionId } = JSON.parse(body) as { connection_id: string };
  const early = await enforceAuthDeadline(connectionId);
  if (early !== undefined) await armAuthDeadline(connectionId, early);
});
