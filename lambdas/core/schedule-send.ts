import { ConflictException, CreateScheduleCommand } from '@aws-sdk/client-scheduler';
import { envNames } from '../../common/env';
import { requiredEnv } from './clients';
import { scheduler } from './clients-scheduler';
import { type MessageQueue, messageBody } from './message-queue';

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
