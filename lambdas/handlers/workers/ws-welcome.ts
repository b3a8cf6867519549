import { sqsWorker } from '../../core/sqs-worker';
import { sendWelcome, type WelcomeRequest } from '../../domain/realtime/welcome';

/** Sends the `session` frame of a connection authenticated at `$connect`. */
export const handler = sqsWorker('ws.welcome', (body, _record, context) =>
  sendWelcome(JSON.parse(body) as WelcomeRequest, Date.now() + context.getRemainingTimeInMillis()),
);
