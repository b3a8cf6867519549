import { scheduleMessage } from '../../core/schedule-send';
import { enqueue } from '../../core/sqs-send';
import { type FanoutMessage, fanoutQueue } from './fanout-messages';

/**
 * A one-time EventBridge Scheduler schedule that sends `message` to `fanout` at `atMs` and deletes itself. The
 * name makes it idempotent: a retry that finds it created leaves it as it is.
 */
export const scheduleOnFanout = (name: string, atMs: number, message: FanoutMessage): Promise<void> =>
  scheduleMessage(fanoutQueue, message, atMs, name);

/** Due at most this far ahead, a message goes to `fanout` with an SQS delay instead of a schedule. */
const SCHEDULE_THRESHOLD_MS = 1000;

/**
 * `message` on `fanout` at `atMs`: a one-time schedule named `name`, or, that near, a message delayed by a second
 * (its handler puts back one that arrives early).
 */
export const sendOnFanoutAt = async (name: string, atMs: number, message: FanoutMessage): Promise<void> => {
  if (atMs - Date.now() <= SCHEDULE_THRESHOLD_MS) await enqueue(fanoutQueue, [message], 1);
  else await scheduleOnFanout(name, atMs, message);
};
