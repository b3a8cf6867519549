import { ConflictException, CreateScheduleCommand } from '@aws-sdk/client-scheduler';
import { envNames } from '../../../common/env';
import { requiredEnv } from '../../core/clients';
import { scheduler } from '../../core/clients-scheduler';
import { messageBody } from '../../core/message-queue';
import { enqueue } from '../../core/sqs-send';
import { type FanoutMessage, fanoutQueue } from './fanout-messages';

/** `at()` takes whole seconds: round up so the schedule never fires before its time. */
export const atExpression = (epochMs: number): string =>
  `at(${new Date(Math.ceil(epochMs / 1000) * 1000).toISOString().slice(0, 19)})`;

/**
 * A one-time EventBridge Scheduler schedule that sends `message` to `fanout` at `atMs` and deletes itself. The
 * name makes it idempotent: a retry that finds it created (ConflictException) leaves it as it is.
 */
export const scheduleOnFanout = async (name: string, atMs: number, message: FanoutMessage): Promise<void> => {
  try {
    await scheduler().send(
      new CreateScheduleCommand({
        Name: name,
        GroupName: requiredEnv(envNames.scheduleGroup),
        ScheduleExpression: atExpression(atMs),
        ScheduleExpressionTimezone: 'UTC',
        FlexibleTimeWindow: { Mode: 'OFF' },
        ActionAfterCompletion: 'DELETE',
        Target: {
          Arn: requiredEnv(envNames.queueArn('fanout')),
          RoleArn: requiredEnv(envNames.schedulerRoleArn),
          Input: messageBody(fanoutQueue, message),
        },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConflictException)) throw error; // an earlier attempt created it already
  }
};

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
