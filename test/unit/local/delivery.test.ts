/**
 * AWS-like delivery (local/delivery.ts), through the stand-ins' real SDK clients: SQS duplicates, reorders
 * and returns partial receives; EventBridge targets get events after PutEvents answers; flexible schedules
 * fire inside their window; the same seed makes the same choices.
 */
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { CreateScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import {
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import type { QueueSpec, Worker } from '../../../lib/wiring';
import {
  awsLikeDelivery,
  type Chooser,
  type Delivery,
  exactDelivery,
  resolveDelivery,
} from '../../../local/delivery';
import { LocalEventBridge } from '../../../local/eventbridge/local-eventbridge';
import { LocalLambda } from '../../../local/lambda/local-lambda';
import { LocalScheduler } from '../../../local/scheduler/local-scheduler';
import { LocalSqs } from '../../../local/sqs/local-sqs';
import { waitUntil } from '../../support/await';

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const queue: QueueSpec = { id: 'jobs', maxReceiveCount: 3, visibilityTimeoutSecs: 30, purpose: 'fixture' };
const stoppers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stoppers.splice(0).reverse()) await stop();
});

const startSqs = async (delivery: Delivery, workers: readonly Worker[] = []) => {
  const arrivals: { body: string; at: number }[] = [];
  const sqs = new LocalSqs({ queues: [queue], log: () => {}, delivery });
  const lambda = new LocalLambda({
    sqs,
    workers,
    busFunctions: [],
    invoke: async (_fn, event) => {
      for (const record of (event as SQSEvent).Records) arrivals.push({ body: record.body, at: Date.now() });
    },
    log: () => {},
  });
  await sqs.start();
  stoppers.push(() => sqs.stop());
  await lambda.start();
  stoppers.push(() => lambda.stop());
  const client = new SQSClient({ endpoint: sqs.endpoint, region: 'us-east-1', credentials, maxAttempts: 1 });
  return { sqs, client, arrivals };
};

/** Sends `count` messages, then receives and deletes until the queue is empty; returns what each receive got. */
const drain = async (delivery: Delivery, count: number) => {
  const { sqs, client } = await startSqs(delivery);
  const QueueUrl = sqs.queueUrl('jobs');
  for (let start = 0; start < count; start += 10) {
    const ids = Array.from({ length: Math.min(10, count - start) }, (_, index) => start + index);
    await client.send(
      new SendMessageBatchCommand({
        QueueUrl,
        Entries: ids.map((id) => ({ Id: `m${id}`, MessageBody: String(id) })),
      }),
    );
  }
  const receives: { bodies: string[]; messageIds: string[]; available: number }[] = [];
  for (;;) {
    const available = sqs.stats('jobs');
    if (available.ApproximateNumberOfMessages + available.ApproximateNumberOfMessagesNotVisible === 0) break;
    const { Messages = [] } = await client.send(
      new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    receives.push({
      bodies: Messages.map((message) => message.Body ?? ''),
      messageIds: Messages.map((message) => message.MessageId ?? ''),
      available: available.ApproximateNumberOfMessages,
    });
    for (const message of Messages) {
      await client.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: message.ReceiptHandle }));
    }
  }
  return receives;
};

describe('AWS-like delivery', () => {
  it('is on unless turned off, and a given seed repeats its choices', () => {
    expect(resolveDelivery({}, {}).mode).toBe('aws');
    expect(resolveDelivery({}, { NOTIFY_LOCAL_DELIVERY: 'exact' }).mode).toBe('exact');
    expect(resolveDelivery({}, { NOTIFY_LOCAL_SEED: '42' }).seed).toBe(42);
    expect(() => resolveDelivery({}, { NOTIFY_LOCAL_DELIVERY: 'kind' })).toThrow(/aws" or "exact/);
    expect(() => resolveDelivery({}, { NOTIFY_LOCAL_SEED: 'x' })).toThrow(/non-negative integer/);
    const draws = (chooser: Chooser) => Array.from({ length: 20 }, () => chooser.between(0, 1000));
    expect(draws(awsLikeDelivery(7).chooser('sqs:jobs'))).toEqual(
      draws(awsLikeDelivery(7).chooser('sqs:jobs')),
    );
    expect(draws(awsLikeDelivery(7).chooser('sqs:jobs'))).not.toEqual(
      draws(awsLikeDelivery(8).chooser('sqs:jobs')),
    );
  });

  it('SQS: every message arrives, some twice, not in send order, and some receives return fewer than available', async () => {
    const receives = await drain(awsLikeDelivery(1234), 300);
    const bodies = receives.flatMap((receive) => receive.bodies);
    expect(new Set(bodies)).toEqual(new Set(Array.from({ length: 300 }, (_, index) => String(index))));
    // A duplicate is the same message again: same MessageId, same body.
    const messageIds = receives.flatMap((receive) => receive.messageIds);
    expect(messageIds.length).toBeGreaterThan(new Set(messageIds).size);
    const firstSeen = [...new Set(bodies)].map(Number);
    expect(firstSeen).not.toEqual([...firstSeen].sort((a, b) => a - b));
    expect(receives.some((receive) => receive.bodies.length < Math.min(10, receive.available))).toBe(true);
  }, 60_000);

  it('SQS with exact delivery: each message once, in send order, full receives', async () => {
    const receives = await drain(exactDelivery(), 50);
    expect(receives.flatMap((receive) => receive.bodies)).toEqual(
      Array.from({ length: 50 }, (_, index) => String(index)),
    );
  });

  it('EventBridge: PutEvents answers before the target queue can deliver the event, which then arrives', async () => {
    // A chooser that always picks the longest delay, so "not yet receivable" is certain when PutEvents answers.
    const slowest: Delivery = {
      mode: 'aws',
      seed: 0,
      chooser: () => ({ chance: () => false, between: (_min, max) => max, shuffled: (items) => [...items] }),
    };
    const { sqs } = await startSqs(exactDelivery());
    const bus = new LocalEventBridge({
      busName: 'bus',
      rules: [{ id: 'all', description: 'all', pattern: { source: ['test'] }, targetQueue: 'jobs' }],
      sqs,
      log: () => {},
      delivery: slowest,
    });
    await bus.start();
    stoppers.push(() => bus.stop());
    const client = new EventBridgeClient({ endpoint: bus.endpoint, region: 'us-east-1', credentials });
    const put = await client.send(
      new PutEventsCommand({
        Entries: [{ EventBusName: 'bus', Source: 'test', DetailType: 't', Detail: '{}' }],
      }),
    );
    expect(put.FailedEntryCount).toBe(0);
    expect(sqs.stats('jobs')).toMatchObject({
      ApproximateNumberOfMessages: 0,
      ApproximateNumberOfMessagesDelayed: 1,
    });
    await waitUntil(() => sqs.stats('jobs').ApproximateNumberOfMessages === 1);
  });

  it('Scheduler: a flexible schedule fires at the moment drawn inside its window', async () => {
    const drawn: [number, number][] = [];
    const twoSecondsIn: Delivery = {
      mode: 'aws',
      seed: 0,
      chooser: () => ({
        chance: () => false,
        between: (min, max) => {
          drawn.push([min, max]);
          return min + 2000;
        },
        shuffled: (items) => [...items],
      }),
    };
    const worker = {
      id: 'due',
      handler: 'test/fixture.ts',
      queue: 'jobs',
      batchSize: 1,
      maxBatchingWindowSecs: 0,
    };
    const { sqs, arrivals } = await startSqs(exactDelivery(), [worker]);
    const scheduler = new LocalScheduler({
      targets: [{ id: 'due', targetQueue: 'jobs', description: 'fixture' }],
      recurring: [],
      sqs,
      invoke: async () => undefined,
      log: () => {},
      delivery: twoSecondsIn,
    });
    await scheduler.start();
    stoppers.push(() => scheduler.stop());
    const client = new SchedulerClient({ endpoint: scheduler.endpoint, region: 'us-east-1', credentials });
    // At least 2 s ahead: the create must land before it passes (an at() in the past is refused), with room
    // for a loaded machine's stall.
    const at = Math.ceil((Date.now() + 2000) / 1000) * 1000;
    await client.send(
      new CreateScheduleCommand({
        Name: 'flexible',
        ScheduleExpression: `at(${new Date(at).toISOString().slice(0, 19)})`,
        FlexibleTimeWindow: { Mode: 'FLEXIBLE', MaximumWindowInMinutes: 1 },
        Target: {
          Arn: sqs.queueArn('jobs'),
          RoleArn: 'arn:aws:iam::000000000000:role/scheduler',
          Input: 'due',
        },
      }),
    );
    expect(drawn).toEqual([[0, 60_000]]);
    const arrival = await waitUntil(() => arrivals.find((candidate) => candidate.body === 'due'));
    expect(arrival.at).toBeGreaterThanOrEqual(at + 2000);
    const refused = client.send(
      new CreateScheduleCommand({
        Name: 'no-window',
        ScheduleExpression: `at(${new Date(at).toISOString().slice(0, 19)})`,
        FlexibleTimeWindow: { Mode: 'FLEXIBLE' },
        Target: { Arn: sqs.queueArn('jobs'), RoleArn: 'arn:aws:iam::000000000000:role/scheduler' },
      }),
    );
    await expect(refused).rejects.toMatchObject({ name: 'ValidationException' });
  }, 30_000);
});
