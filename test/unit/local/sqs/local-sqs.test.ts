import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { afterEach, describe, expect, it } from 'vitest';
import type { QueueSpec, Worker } from '../../../../lib/wiring';
import { AWS_LIKE_ODDS, type Delivery } from '../../../../local/delivery';
import { LocalLambda, type LocalLambdaOptions } from '../../../../local/lambda/local-lambda';
import { LambdaTimeoutError } from '../../../../local/lambda/runner';
import type { FunctionRef } from '../../../../local/lambda/types';
import { LocalSqs, type LocalSqsOptions } from '../../../../local/sqs/local-sqs';
import { rejection, waitUntil } from '../../../support/await';

const md5 = (text: string) => createHash('md5').update(text).digest('hex');

const jobsQueue: QueueSpec = {
  id: 'jobs',
  maxReceiveCount: 3,
  visibilityTimeoutSecs: 30,
  purpose: 'fixture queue',
};

const worker = (overrides: Partial<Worker> = {}): Worker => ({
  id: 'jobs.worker',
  handler: 'test/fixture.ts',
  queue: 'jobs',
  batchSize: 10,
  maxBatchingWindowSecs: 0,
  ...overrides,
});

const running: { readonly sqs: LocalSqs; readonly lambda: LocalLambda }[] = [];
const dirs: string[] = [];

/** The SQS stand-in, and Lambda's beside it with the given workers (their event source mappings). */
const start = async (
  options: Partial<LocalSqsOptions> & Partial<Pick<LocalLambdaOptions, 'workers' | 'invoke'>> = {},
) => {
  const { workers = [], invoke = async () => undefined, ...sqsOptions } = options;
  const sqs = new LocalSqs({ queues: [jobsQueue], log: () => {}, ...sqsOptions });
  const lambda = new LocalLambda({ sqs, workers, busFunctions: [], invoke, log: () => {} });
  await sqs.start();
  await lambda.start();
  running.push({ sqs, lambda });
  return { sqs, lambda, client: clientOf(sqs), queueUrl: sqs.queueUrl('jobs') };
};

const clientOf = (sqs: LocalSqs) =>
  new SQSClient({
    endpoint: sqs.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });

/**
 * What a SIGKILL of the runtime leaves: a second stand-in started on the data folder of one still running, which
 * never stops (its last writes are those on disk); it is stopped after the test.
 */
const restartAfterCrash = async (dataDir: string, timeScale: number) => {
  const sqs = new LocalSqs({ queues: [jobsQueue], log: () => {}, dataDir, timeScale });
  const lambda = new LocalLambda({ sqs, workers: [], busFunctions: [], invoke: async () => undefined });
  await sqs.start();
  running.push({ sqs, lambda });
  return { sqs, client: clientOf(sqs), queueUrl: sqs.queueUrl('jobs') };
};

afterEach(async () => {
  for (const { sqs, lambda } of running.splice(0)) {
    await lambda.stop();
    await sqs.stop();
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('LocalSqs wire protocol (real @aws-sdk/client-sqs)', () => {
  it('SendMessage answers the MD5 the SDK checks, and the message can be received and deleted', async () => {
    const { client, queueUrl } = await start();
    const sent = await client.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: 'héllo wörld',
        MessageAttributes: { kind: { DataType: 'String', StringValue: 'greeting' } },
      }),
    );
    expect(sent.MD5OfMessageBody).toBe(md5('héllo wörld'));
    expect(sent.MessageId).toMatch(/^[0-9a-f-]{36}$/);

    const received = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      }),
    );
    const message = received.Messages?.[0];
    expect(message?.Body).toBe('héllo wörld');
    expect(message?.MessageAttributes?.kind?.StringValue).toBe('greeting');
    expect(message?.MD5OfMessageAttributes).toBe(sent.MD5OfMessageAttributes);
    expect(message?.Attributes?.ApproximateReceiveCount).toBe('1');

    await client.send(
      new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message?.ReceiptHandle }),
    );
    const attributes = await client.send(
      new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['All'] }),
    );
    expect(attributes.Attributes).toMatchObject({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '0',
      QueueArn: 'arn:aws:sqs:us-east-1:000000000000:jobs',
    });
  });

  it('computes MD5OfMessageAttributes with the SQS algorithm', async () => {
    const { client, queueUrl } = await start();
    const sent = await client.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: 'x',
        MessageAttributes: { a: { DataType: 'String', StringValue: 'v' } },
      }),
    );
    // name "a", type "String", transport 1, value "v" — each length-prefixed (4 bytes, big endian).
    const expected = createHash('md5')
      .update(Buffer.from([0, 0, 0, 1, 0x61, 0, 0, 0, 6, ...Buffer.from('String'), 1, 0, 0, 0, 1, 0x76]))
      .digest('hex');
    expect(sent.MD5OfMessageAttributes).toBe(expected);
  });

  it("rejects a message over 1 MiB (the queues' MaximumMessageSize) and a DelaySeconds over 900", async () => {
    const { client, queueUrl } = await start();
    const tooLarge = await rejection(
      client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x'.repeat(1_048_577) })),
    );
    expect(tooLarge.name).toBe('InvalidParameterValue');
    expect(tooLarge.message).toContain('1048576');
    const tooLate = await rejection(
      client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x', DelaySeconds: 901 })),
    );
    expect(tooLate.name).toBe('InvalidParameterValue');
    expect(tooLate.message).toContain('DelaySeconds');
    await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x'.repeat(1_048_576) }));
  });

  it('counts a delayed message as delayed, not visible', async () => {
    const { client, queueUrl } = await start();
    await client.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'later', DelaySeconds: 900 }),
    );
    const attributes = await client.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesDelayed'],
      }),
    );
    expect(attributes.Attributes).toEqual({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesDelayed: '1',
    });
    const received = await client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl }));
    expect(received.Messages).toBeUndefined();
  });

  it('SendMessageBatch enforces 10 entries, distinct ids, a non-empty batch and 1 MiB in total', async () => {
    const { client, queueUrl } = await start();
    const entries = (count: number, size = 1) =>
      Array.from({ length: count }, (_, index) => ({ Id: `m${index}`, MessageBody: 'x'.repeat(size) }));

    const tooMany = await rejection(
      client.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries(11) })),
    );
    expect(tooMany.name).toBe('TooManyEntriesInBatchRequest');

    const empty = await rejection(
      client.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: [] })),
    );
    expect(empty.name).toBe('EmptyBatchRequest');

    const duplicate = await rejection(
      client.send(
        new SendMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: [
            { Id: 'same', MessageBody: 'a' },
            { Id: 'same', MessageBody: 'b' },
          ],
        }),
      ),
    );
    expect(duplicate.name).toBe('BatchEntryIdsNotDistinct');

    const tooLong = await rejection(
      client.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries(2, 540_000) })),
    );
    expect(tooLong.name).toBe('BatchRequestTooLong');

    const ok = await client.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries(10) }));
    expect(ok.Successful).toHaveLength(10);
  });

  it('SendMessageBatch reports per-entry failures and sends the valid entries', async () => {
    const { client, queueUrl, sqs } = await start();
    const result = await client.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: [
          { Id: 'good', MessageBody: 'fine' },
          { Id: 'late', MessageBody: 'too late', DelaySeconds: 901 },
          { Id: 'bad_chars', MessageBody: 'nul \u0000 here' },
        ],
      }),
    );
    expect(result.Successful?.map((entry) => entry.Id)).toEqual(['good']);
    expect(result.Failed).toEqual([
      expect.objectContaining({ Id: 'late', Code: 'InvalidParameterValue', SenderFault: true }),
      expect.objectContaining({ Id: 'bad_chars', Code: 'InvalidMessageContents', SenderFault: true }),
    ]);
    expect(sqs.stats('jobs').ApproximateNumberOfMessages).toBe(1);
  });

  it('GetQueueUrl finds declared queues and their DLQs, and answers QueueDoesNotExist otherwise', async () => {
    const { client, sqs } = await start();
    const found = await client.send(new GetQueueUrlCommand({ QueueName: 'jobs-dlq' }));
    expect(found.QueueUrl).toBe(sqs.queueUrl('jobs-dlq'));
    const missing = await rejection(client.send(new GetQueueUrlCommand({ QueueName: 'nope' })));
    expect(missing.name).toBe('QueueDoesNotExist');
    const unknownUrl = await rejection(
      client.send(
        new SendMessageCommand({ QueueUrl: `${sqs.endpoint}/000000000000/nope`, MessageBody: 'x' }),
      ),
    );
    expect(unknownUrl.name).toBe('QueueDoesNotExist');
  });

  it('fails loudly, naming the operation, for an operation it does not implement', async () => {
    const { client } = await start();
    const error = await rejection(client.send(new CreateQueueCommand({ QueueName: 'other' })));
    expect(error.name).toBe('UnsupportedOperation');
    expect(error.message).toBe('LocalSqs does not implement CreateQueue');
    expect(error.$metadata?.httpStatusCode).toBe(400);
  });

  it('ReceiveMessage validates MaxNumberOfMessages; PurgeQueue empties the queue', async () => {
    const { client, queueUrl, sqs } = await start();
    const invalid = await rejection(
      client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 11 })),
    );
    expect(invalid.name).toBe('InvalidParameterValue');
    await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'a' }));
    await client.send(new PurgeQueueCommand({ QueueUrl: queueUrl }));
    expect(sqs.stats('jobs').ApproximateNumberOfMessages).toBe(0);
  });

  it('a message received and not deleted returns after the (scaled) visibility timeout', async () => {
    // 30 s × 0.1 = 3 s: the receive just after the first, and the attribute read after the second, come well
    // within it on a loaded machine (at 0.01, 0.3 s, a stall of the test between two requests flipped them).
    const { client, queueUrl } = await start({ timeScale: 0.1 });
    await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'again' }));
    const first = await client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl }));
    expect(first.Messages).toHaveLength(1);
    const hidden = await client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl }));
    expect(hidden.Messages).toBeUndefined();
    const second = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        // Real seconds (long polling is not scaled), well past the 3 s.
        WaitTimeSeconds: 20,
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      }),
    );
    expect(second.Messages?.[0]?.Attributes?.ApproximateReceiveCount).toBe('2');
    // The first receipt handle is stale: deleting with it succeeds but keeps the message (as on SQS).
    await client.send(
      new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: first.Messages?.[0]?.ReceiptHandle }),
    );
    const attributes = await client.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    expect(attributes.Attributes?.ApproximateNumberOfMessagesNotVisible).toBe('1');
  });

  it('keeps queued messages across a restart with dataDir', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'local-sqs-'));
    dirs.push(dataDir);
    const first = await start({ dataDir });
    await first.client.send(new SendMessageCommand({ QueueUrl: first.queueUrl, MessageBody: 'kept' }));
    await first.lambda.stop();
    await first.sqs.stop();
    running.splice(
      running.findIndex(({ sqs }) => sqs === first.sqs),
      1,
    );

    const second = await start({ dataDir });
    const received = await second.client.send(new ReceiveMessageCommand({ QueueUrl: second.queueUrl }));
    expect(received.Messages?.[0]?.Body).toBe('kept');
  });

  it('keeps a message in flight at a crash hidden as its receive (or a later visibility change) left it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'local-sqs-'));
    dirs.push(dataDir);
    const { client, queueUrl, sqs } = await start({ dataDir, timeScale: 0.1 });
    for (const body of ['held', 'released']) {
      await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    }
    // Hidden for 600 s × 0.1 = 60 s, then one of them handed back at once.
    const received = await client.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 2, VisibilityTimeout: 600 }),
    );
    expect(received.Messages).toHaveLength(2);
    const released = received.Messages?.find((message) => message.Body === 'released');
    await client.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: queueUrl,
        ReceiptHandle: released?.ReceiptHandle,
        VisibilityTimeout: 0,
      }),
    );
    await sqs.durable();

    // SQS does not know its consumer died: the held message stays hidden, the released one is there.
    const restarted = await restartAfterCrash(dataDir, 0.1);
    expect(restarted.sqs.stats('jobs')).toEqual({
      ApproximateNumberOfMessages: 1,
      ApproximateNumberOfMessagesDelayed: 0,
      ApproximateNumberOfMessagesNotVisible: 1,
    });
    const again = await restarted.client.send(
      new ReceiveMessageCommand({
        QueueUrl: restarted.queueUrl,
        MaxNumberOfMessages: 2,
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
      }),
    );
    expect(
      again.Messages?.map((message) => [message.Body, message.Attributes?.ApproximateReceiveCount]),
    ).toEqual([['released', '2']]);
  });

  it('does not count the receive of a duplicate copy toward the redrive, across a restart too', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'local-sqs-'));
    dirs.push(dataDir);
    // AWS-like delivery that makes the first receive's message a copy another consumer gets: nothing else unkind.
    let copied = false;
    const delivery: Delivery = {
      mode: 'aws',
      seed: 0,
      chooser: () => ({
        chance: (p) => {
          if (p !== AWS_LIKE_ODDS.duplicateWhileHeld || copied) return false;
          copied = true;
          return true;
        },
        between: (min) => min,
        shuffled: (items) => [...items],
      }),
    };
    // jobs: maxReceiveCount 3, visibility 30 s × 0.001 = 30 ms.
    const { client, queueUrl, sqs } = await start({ dataDir, timeScale: 0.001, delivery });
    await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'copied once' }));
    const receiveCounts: string[] = [];
    const receive = async (on: { client: SQSClient; queueUrl: string }) => {
      const answer = await on.client.send(
        new ReceiveMessageCommand({
          QueueUrl: on.queueUrl,
          WaitTimeSeconds: 1,
          MessageSystemAttributeNames: ['ApproximateReceiveCount'],
        }),
      );
      for (const message of answer.Messages ?? []) {
        receiveCounts.push(message.Attributes?.ApproximateReceiveCount ?? '');
      }
      return answer.Messages?.length ?? 0;
    };
    // The first receive, its copy 1 ms later (a second consumer), then a third receive: none deletes it.
    for (let round = 0; round < 3; round += 1) expect(await receive({ client, queueUrl })).toBe(1);
    await sqs.durable();
    // Three receives, one of them the copy's: two count toward the redrive, after a crash as before it.
    const restarted = await restartAfterCrash(dataDir, 0.001);
    expect(await receive(restarted)).toBe(1);
    expect(receiveCounts).toEqual(['1', '2', '3', '4']);
    // The fourth is the third that counts: the next receive moves it to the DLQ.
    expect(await receive(restarted)).toBe(0);
    expect(restarted.sqs.stats('jobs-dlq').ApproximateNumberOfMessages).toBe(1);
  });

  it('counts sent, received and deleted messages and billed requests per queue', async () => {
    const { client, queueUrl, sqs } = await start();
    await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x'.repeat(70_000) }));
    const received = await client.send(new ReceiveMessageCommand({ QueueUrl: queueUrl }));
    await client.send(
      new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: received.Messages?.[0]?.ReceiptHandle }),
    );
    const counters = sqs.counters().jobs;
    expect(counters).toMatchObject({ sent: 1, received: 1, deleted: 1, movedToDlq: 0 });
    // 70 000 bytes is two 64 KiB units for the send and the receive, plus one for the delete.
    expect(counters?.requests).toBe(5);
  });
});

describe('Lambda’s event source mapping on LocalSqs (LocalLambda)', () => {
  type Invocation = { fn: FunctionRef; records: SQSRecord[] };

  it('builds the SQSEvent exactly as Lambda does', async () => {
    const invocations: Invocation[] = [];
    const { client, queueUrl, sqs } = await start({
      workers: [worker()],
      invoke: async (fn, event) => {
        invocations.push({ fn, records: (event as SQSEvent).Records });
        return { batchItemFailures: [] };
      },
    });
    await client.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: '{"hello":"world"}',
        MessageAttributes: { trace: { DataType: 'String', StringValue: 't-1' } },
      }),
    );
    const [invocation] = await waitUntil(() => invocations.length > 0 && invocations);
    expect(invocation?.fn.id).toBe('jobs.worker');
    const record = invocation?.records[0];
    expect(record).toEqual({
      messageId: expect.any(String),
      receiptHandle: expect.any(String),
      body: '{"hello":"world"}',
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: expect.stringMatching(/^\d{13}$/),
        SenderId: 'local',
        ApproximateFirstReceiveTimestamp: expect.stringMatching(/^\d{13}$/),
      },
      messageAttributes: {
        trace: { stringValue: 't-1', stringListValues: [], binaryListValues: [], dataType: 'String' },
      },
      md5OfMessageAttributes: expect.stringMatching(/^[0-9a-f]{32}$/),
      md5OfBody: md5('{"hello":"world"}'),
      eventSource: 'aws:sqs',
      eventSourceARN: sqs.queueArn('jobs'),
      awsRegion: 'us-east-1',
    });
    await waitUntil(() => sqs.counters().jobs?.deleted === 1);
  });

  it('waits up to the batching window to fill a batch', async () => {
    const batches: string[][] = [];
    const { client, queueUrl } = await start({
      // A 20 s window × 0.1 = 2 s of waiting for more messages (the visibility timeout is 3 s): room for a
      // stall of the test between its two sends (at 0.01 the window was 0.2 s).
      timeScale: 0.1,
      workers: [worker({ batchSize: 10, maxBatchingWindowSecs: 20 })],
      invoke: async (_fn, event) => {
        batches.push((event as SQSEvent).Records.map((record) => record.body));
      },
    });
    await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'first' }));
    await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'second' }));
    await waitUntil(() => batches.length > 0);
    expect(batches).toEqual([['first', 'second']]);
  });

  it('invokes as soon as the batch is full, without waiting out the window', async () => {
    const batches: string[][] = [];
    const { client, queueUrl } = await start({
      // A 300 s window in real time: the test would time out if a full batch waited for it.
      workers: [worker({ batchSize: 3, maxBatchingWindowSecs: 300 })],
      invoke: async (_fn, event) => {
        batches.push((event as SQSEvent).Records.map((record) => record.body));
      },
    });
    await client.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: ['a', 'b', 'c'].map((body) => ({ Id: body, MessageBody: body })),
      }),
    );
    await waitUntil(() => batches.length > 0);
    expect(batches[0]).toEqual(['a', 'b', 'c']);
  });

  it('retries reported batch item failures after the visibility timeout and moves a poison message to the DLQ', async () => {
    const deliveries: { body: string; receiveCount: string }[] = [];
    const { client, queueUrl, sqs } = await start({
      timeScale: 0.01,
      workers: [worker({ batchSize: 10 })],
      invoke: async (_fn, event) => {
        const records = (event as SQSEvent).Records;
        for (const record of records) {
          deliveries.push({ body: record.body, receiveCount: record.attributes.ApproximateReceiveCount });
        }
        return {
          batchItemFailures: records
            .filter((record) => record.body === 'poison')
            .map((record) => ({ itemIdentifier: record.messageId })),
        };
      },
    });
    await client.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: [
          { Id: 'good', MessageBody: 'good' },
          { Id: 'poison', MessageBody: 'poison' },
        ],
      }),
    );
    await waitUntil(() => sqs.stats('jobs-dlq').ApproximateNumberOfMessages === 1);
    expect(deliveries.filter((delivery) => delivery.body === 'good')).toHaveLength(1);
    expect(
      deliveries.filter((delivery) => delivery.body === 'poison').map((delivery) => delivery.receiveCount),
    ).toEqual(['1', '2', '3']);
    expect(sqs.counters().jobs).toMatchObject({ deleted: 1, movedToDlq: 1 });
    expect(sqs.stats('jobs')).toEqual({
      ApproximateNumberOfMessages: 0,
      ApproximateNumberOfMessagesDelayed: 0,
      ApproximateNumberOfMessagesNotVisible: 0,
    });
    const dlq = await client.send(new ReceiveMessageCommand({ QueueUrl: sqs.queueUrl('jobs-dlq') }));
    expect(dlq.Messages?.[0]?.Body).toBe('poison');
  });

  it('a crashed invocation brings the whole batch back, and a duplicate-safe worker sees every message at least once', async () => {
    const processed = new Set<string>();
    let deliveries = 0;
    let crashed = false;
    const { client, queueUrl, sqs } = await start({
      timeScale: 0.01,
      workers: [worker({ batchSize: 4 })],
      invoke: async (_fn, event) => {
        const records = (event as SQSEvent).Records;
        deliveries += records.length;
        if (!crashed) {
          crashed = true;
          throw new Error('Task timed out after 10.00 seconds');
        }
        for (const record of records) processed.add(record.body); // idempotent effect
      },
    });
    const bodies = ['m1', 'm2', 'm3', 'm4'];
    await client.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: bodies.map((body) => ({ Id: body, MessageBody: body })),
      }),
    );
    await waitUntil(() => sqs.counters().jobs?.deleted === bodies.length);
    expect([...processed].sort()).toEqual(bodies);
    expect(deliveries).toBeGreaterThan(bodies.length);
  });

  it.each([
    ['shorter', 0.01],
    ['longer', 1],
  ])(
    'keeps a batch whose invocation died with the runtime hidden until that invocation’s hold ends (a visibility timeout %s than it)',
    async (_, timeScale) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'local-sqs-'));
      dirs.push(dataDir);
      let invoked = false;
      const { client, queueUrl } = await start({
        dataDir,
        // The function's deadline is 1 s after the invocation begins, and what it holds (a claim) lasts 5 s more:
        // handed out again before that, the message would find the claim live; after that, it is safe to, and a
        // visibility timeout of 30 s × 1 waited out in full would only slow the restart down.
        timeScale,
        workers: [worker({ timeoutSecs: 1 })],
        invoke: () => {
          invoked = true;
          return new Promise(() => {}); // never settles: the runtime dies during it
        },
      });
      // The receive comes after the send: its hold ends 7 s after the send at the earliest.
      const sentAt = Date.now();
      await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'cut off' }));
      await waitUntil(() => invoked);

      // The receive was on disk before the invocation began: the message is in flight after the restart.
      const restarted = await restartAfterCrash(dataDir, timeScale);
      expect(restarted.sqs.stats('jobs').ApproximateNumberOfMessagesNotVisible).toBe(1);
      const again = await restarted.client.send(
        new ReceiveMessageCommand({
          QueueUrl: restarted.queueUrl,
          // Real seconds: past the hold (7 s), short of the unscaled visibility timeout (30 s).
          WaitTimeSeconds: 20,
          MessageSystemAttributeNames: ['ApproximateReceiveCount'],
        }),
      );
      expect(again.Messages?.[0]?.Attributes?.ApproximateReceiveCount).toBe('2');
      expect(Date.now() - sentAt).toBeGreaterThanOrEqual(1_000 + 6_000);
    },
  );

  it('keeps the batch of a timed-out invocation hidden past its deadline and holds (its handler may still run)', async () => {
    const invokedAt: number[] = [];
    const { client, queueUrl, sqs } = await start({
      timeScale: 0.01,
      workers: [worker({ timeoutSecs: 1 })],
      invoke: async () => {
        invokedAt.push(Date.now());
        if (invokedAt.length === 1) throw new LambdaTimeoutError('jobs.worker', 1);
      },
    });
    const sentAt = Date.now();
    await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'slow' }));
    await waitUntil(() => sqs.counters().jobs?.deleted === 1, 50);
    expect(invokedAt).toHaveLength(2);
    // Not after the visibility timeout (0.3 s): after the deadline (1 s from the receive, which comes after the
    // send) and 6 s of holds.
    expect((invokedAt[1] ?? 0) - sentAt).toBeGreaterThanOrEqual(1_000 + 6_000);
  });

  it('treats a partial batch response naming an unknown message as a failure of the whole batch', async () => {
    let calls = 0;
    const { client, queueUrl, sqs } = await start({
      timeScale: 0.01,
      workers: [worker()],
      invoke: async () => {
        calls += 1;
        return calls === 1 ? { batchItemFailures: [{ itemIdentifier: 'not-in-this-batch' }] } : {};
      },
    });
    await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'x' }));
    await waitUntil(() => sqs.counters().jobs?.deleted === 1);
    expect(calls).toBe(2);
  });

  it('never runs more concurrent batches than maxConcurrency', async () => {
    let running_ = 0;
    let peak = 0;
    let done = 0;
    const { client, queueUrl } = await start({
      workers: [worker({ batchSize: 1, maxConcurrency: 2 })],
      invoke: async () => {
        running_ += 1;
        peak = Math.max(peak, running_);
        await new Promise((resolve) => setTimeout(resolve, 30));
        running_ -= 1;
        done += 1;
      },
    });
    await client.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: Array.from({ length: 6 }, (_, index) => ({ Id: `m${index}`, MessageBody: `m${index}` })),
      }),
    );
    await waitUntil(() => done === 6);
    expect(peak).toBe(2);
  });

  it.each([
    [
      'a function timeout over the queue visibility timeout',
      { timeoutSecs: 31 },
      /visibility timeout 30 s is less than function timeout 31 s/,
    ],
    ['an undeclared queue', { queue: 'nope' }, /Worker jobs\.worker: .*nope/],
    ['a batch size out of range', { batchSize: 0 }, /Worker jobs\.worker: batchSize must be an integer/],
    [
      'a batch over 10 without a batching window',
      { batchSize: 11 },
      /Worker jobs\.worker: a batchSize above 10/,
    ],
  ] as const)('refuses a worker with %s, as CreateEventSourceMapping does', (_, change, message) => {
    expect(
      () =>
        new LocalLambda({
          sqs: new LocalSqs({ queues: [jobsQueue] }),
          workers: [{ ...worker(), ...change } as Worker],
          busFunctions: [],
          invoke: async () => undefined,
        }),
    ).toThrow(message);
  });

  it('in-process enqueue applies the SendMessage rules and feeds the worker', async () => {
    const bodies: string[] = [];
    const { sqs } = await start({
      workers: [worker()],
      invoke: async (_fn, event) => {
        for (const record of (event as SQSEvent).Records) bodies.push(record.body);
      },
    });
    expect(() => sqs.enqueue('jobs', 'x', { delaySeconds: 901 })).toThrow(/DelaySeconds/);
    expect(() => sqs.enqueue('unknown', 'x')).toThrow(/not declared/);
    sqs.enqueue('jobs', 'from a rule');
    await waitUntil(() => bodies.length > 0);
    expect(bodies).toEqual(['from a rule']);
  });
});
