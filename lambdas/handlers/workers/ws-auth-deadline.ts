import { sqsWorker } from '../../core/workers';
import { armAuthDeadline, authDeadlineQueue, enforceAuthDeadline } from '../../domain/realtime/sweeper';

/** Closes a connection still unauthenticated at its auth deadline (the timer `$connect` armed). */
export const handler = sqsWorker(
  'ws.authDeadline',
  authDeadlineQueue,
  async ({ connection_id: connectionId }) => {
    const early = await enforceAuthDeadline(connectionId);
    if (early !== undefined) await armAuthDeadline(connectionId, early);
  },
);
