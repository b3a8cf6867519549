import { ConflictException, CreateScheduleCommand } from '@aws-sdk/client-scheduler';
import * as envNames from '../../common/env-names';
import { SQS_MAX_DELAY_SECS } from '../../common/limits';
import { requiredEnv } from './clients';
import { scheduler } from './clients-scheduler';
import { type MessageQueue, messageBody } from './message-queue';
import { enqueueAfter } from './sqs-send';

/** `at()` takes whole seconds: round up so the message never arrives early. */
const atExpression = (epochMs: number): string =>
  `at(${new Date(Math.ceil(epochMs / 1000) * 1000).toISOString().slice(0, 19)})`;

/**
 * Sends `message` to `queue` at `dueAt` (epoch ms) through a one-time EventBridge Scheduler schedule, for waits past
 * SQS's longest delay (900 s). `name` is derived from the message: scheduling the same one twice is a
 * ConflictException, which means it is scheduled already.
 */
export const scheduleMessage = async <T>(
  queue: MessageQueue<T>,
  message: T,
  dueAt: number,
  name: string,
): Promise<void> => {
  try {
    await scheduler().send(
      new CreateScheduleCommand({
        Name: name,
        GroupName: requiredEnv(envNames.scheduleGroup),
        ScheduleExpression: atExpression(dueAt),
        ScheduleExpressionTimezone: 'UTC',
        FlexibleTimeWindow: { Mode: 'OFF' },
        ActionAfterCompletion: 'DELETE',
        Target: {
          Arn: requiredEnv(envNames.queueArn(queue.id)),
          RoleArn: requiredEnv(envNames.schedulerRoleArn),
          Input: messageBody(queue, message),
        },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConflictException)) throw error;
  }
};

/**
 * A message with part of its wait left (sqs-send.ts, `enqueueAfter`): back to the queue for the rest, or — past
 * `longest` — a one-time schedule named `scheduleName(due)` that sends it to the queue then. Whether it still waits.
 * The rest is relative, counted from the message's arrival: a late arrival makes the work later, never earlier.
 */
export const waitOutRest = async <T extends { readonly rest_secs?: number | undefined }>(
  queue: MessageQueue<T>,
  message: T,
  scheduleName: (due: T) => string,
  now: number,
  longest: number = SQS_MAX_DELAY_SECS,
): Promise<boolean> => {
  const { rest_secs: restSecs, ...rest } = message;
  const due = rest as T;
  if (!(restSecs !== undefined && restSecs > 0)) return false;
  if (restSecs <= longest) await enqueueAfter(queue, [due], restSecs, longest);
  else await scheduleMessage(queue, due, now + restSecs * 1000, scheduleName(due));
  return true;
};
