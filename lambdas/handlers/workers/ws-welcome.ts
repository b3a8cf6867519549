import { sqsWorker } from '../../core/workers';
import { sendWelcome, welcomeQueue } from '../../domain/realtime/welcome';

/** Sends the `session` frame of a connection authenticated at `$connect`. */
export const handler = sqsWorker('ws.welcome', welcomeQueue, (request, _record, context) =>
  sendWelcome(request, Date.now() + context.getRemainingTimeInMillis()),
);
