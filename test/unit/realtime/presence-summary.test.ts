/**
 * The counting and arming of large-room presence summaries (docs/realtime.md), on DynamoDB Local and the local
 * SQS stand-in: however many changes run at once, one summary is armed; every change is announced once; a
 * repeated or late message does nothing; an arming whose message was lost is taken over.
 */
import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { documentClient } from '../../../lambdas/core/clients';
import {
  pendingSummary,
  recordPresenceChange,
  settleSummary,
} from '../../../lambdas/domain/realtime/presence-summary';
import type { PresenceSummaryMessage } from '../../../lambdas/domain/realtime/presence-summary-message';
import { table } from '../../../lambdas/domain/realtime/tables';
import { envNames, wiring } from '../../../lib/wiring';
import { LocalSqs } from '../../../local/sqs/local-sqs';
import { useDynamoDbLocal } from '../../support/dynamodb';
import { recordFunctionLogs } from '../../support/function-logs';

useDynamoDbLocal();
let sqs: LocalSqs;
let client: SQSClient;

beforeAll(async () => {
  // 1 s summaries at a hundredth of AWS time: a queued summary is receivable after 10 ms.
  sqs = new LocalSqs({ queues: wiring.queues, timeScale: 0.01, log: () => {} });
  await sqs.start();
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_SQS: sqs.endpoint,
    [envNames.queueUrl('broadcast')]: sqs.queueUrl('broadcast'),
    [envNames.presenceSummarySecs]: '1',
  });
  client = new SQSClient({
    endpoint: sqs.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
});
afterAll(async () => {
  client?.destroy();
  await sqs?.stop();
});

/** Every summary message queued so far (taken off the queue). */
const queued = async (): Promise<PresenceSummaryMessage[]> => {
  // The delay (1 s × 0.01) has passed well before this, even on a loaded machine.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const messages: PresenceSummaryMessage[] = [];
  for (;;) {
    const out = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: sqs.queueUrl('broadcast'),
        MaxNumberOfMessages: 10,
        // 30 s here (scaled): the queue's own 180 s is 1.8 s, which a stall before the deletes below could outlast,
        // and a message back on the queue would be taken twice.
        VisibilityTimeout: 3000,
      }),
    );
    if (!out.Messages?.length) return messages;
    for (const message of out.Messages) {
      messages.push(JSON.parse(message.Body as string) as PresenceSummaryMessage);
      await client.send(
        new DeleteMessageCommand({
          QueueUrl: sqs.queueUrl('broadcast'),
          ReceiptHandle: message.ReceiptHandle,
        }),
      );
    }
  }
};

const counts = async (room: string) => {
  const { Item } = await documentClient().send(
    new GetCommand({
      TableName: table('presence'),
      Key: { scope: `summary:${room}`, member: 'pending' },
      ConsistentRead: true,
    }),
  );
  return { joins: Item?.joins ?? 0, leaves: Item?.leaves ?? 0, updates: Item?.updates ?? 0 };
};

describe('large-room presence summaries', () => {
  beforeEach(async () => {
    await queued();
  });

  it('arms one summary for many changes at once, and announces each change once', async () => {
    const room = 'room:storm';
    await Promise.all([
      ...Array.from({ length: 12 }, () => recordPresenceChange(room, 'join')),
      ...Array.from({ length: 5 }, () => recordPresenceChange(room, 'leave')),
      recordPresenceChange(room, 'update'),
    ]);
    const [message, ...others] = await queued();
    expect(others).toEqual([]);
    expect(message).toMatchObject({ kind: 'presence.summary', room });
    const pending = await pendingSummary(message as PresenceSummaryMessage);
    expect(pending).toMatchObject({ joins: 12, leaves: 5, updates: 1 });

    // A change between reading the counts and settling them stays for the next summary, which it arms.
    await recordPresenceChange(room, 'join');
    expect(await queued()).toEqual([]);
    // A copy of the message (SQS at least once) before the settle announces the very same summary: a client
    // drops it by its id, so different counts under that id would be lost to it.
    expect(await pendingSummary(message as PresenceSummaryMessage)).toEqual(pending);
    const until = new Date().toISOString();
    await settleSummary(message as PresenceSummaryMessage, pending as NonNullable<typeof pending>, until);
    expect(await counts(room)).toEqual({ joins: 1, leaves: 0, updates: 0 });
    const [next] = await queued();
    expect(next?.claim).not.toBe(message?.claim);
    expect(await pendingSummary(next as PresenceSummaryMessage)).toMatchObject({ joins: 1, since: until });

    // The first message again (a redelivery): its claim is gone, so it sends and settles nothing.
    expect(await pendingSummary(message as PresenceSummaryMessage)).toBeUndefined();
    await settleSummary(message as PresenceSummaryMessage, pending as NonNullable<typeof pending>, until);
    expect(await counts(room)).toEqual({ joins: 1, leaves: 0, updates: 0 });
  });

  it('takes over an arming whose message never came, and the late message then does nothing', async () => {
    const room = 'room:lost';
    await recordPresenceChange(room, 'join');
    const [lost] = await queued();
    // Its message sat somewhere for an hour: the next change arms again.
    await documentClient().send(
      new UpdateCommand({
        TableName: table('presence'),
        Key: { scope: `summary:${room}`, member: 'pending' },
        UpdateExpression: 'SET claimed_at = :old',
        ExpressionAttributeValues: { ':old': Date.now() - 3_600_000 },
      }),
    );
    await recordPresenceChange(room, 'leave');
    const [current] = await queued();
    expect(current?.claim).not.toBe(lost?.claim);
    expect(await pendingSummary(lost as PresenceSummaryMessage)).toBeUndefined();
    expect(await pendingSummary(current as PresenceSummaryMessage)).toMatchObject({ joins: 1, leaves: 1 });
  });

  it('fails the change when the summary cannot be queued, and lets the next change arm it', async () => {
    const room = 'room:refused';
    const url = process.env[envNames.queueUrl('broadcast')] as string;
    process.env[envNames.queueUrl('broadcast')] = `${url}-missing`;
    const logs = recordFunctionLogs();
    try {
      await expect(recordPresenceChange(room, 'join')).rejects.toThrow();
    } finally {
      process.env[envNames.queueUrl('broadcast')] = url;
    }
    expect(logs.at('ERROR')).toMatchObject([{ message: 'presence summary not queued', room }]);
    // Counted all the same; nothing armed, so the next change arms a summary that counts both.
    await recordPresenceChange(room, 'join');
    const [message, ...others] = await queued();
    expect(others).toEqual([]);
    expect(await pendingSummary(message as PresenceSummaryMessage)).toMatchObject({ joins: 2 });
  });
});
