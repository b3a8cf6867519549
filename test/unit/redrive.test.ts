import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { PurgeQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadEventOf, redriveDeadLetters } from '../../lib/ops/redrive';
import type { BusFunction, BusRule } from '../../lib/wiring';
import { LocalEventBridge } from '../../local/eventbridge/local-eventbridge';
import { LambdaInvocationError } from '../../local/lambda/runner';
import { LocalSqs } from '../../local/sqs/local-sqs';
import { waitUntil } from '../support/await';

/**
 * The redrive of a bus function's DLQ (lib/ops/redrive.ts) against the stand-ins: Lambda's invocation record of
 * an event that failed is re-published from its `requestPayload`, EventBridge's own dead letter (the event
 * itself) as it is, and the rule invokes the function again; what holds no event stays for a person to read.
 */
const BUS = 'notify-redrive';
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const sink: BusFunction = {
  id: 'orders.sink',
  handler: 'test/fixture.ts',
  timeoutSecs: 1,
  retryAttempts: 0,
  maxEventAgeSecs: 3600,
  deadLetterQueue: 'ordersSink',
  purpose: 'fixture',
};
const rule: BusRule = {
  id: 'orders.toSink',
  description: 'fixture',
  pattern: { source: ['orders'] },
  targetFunction: sink.id,
};

let failing = true;
const invoked: { detail: unknown }[] = [];
let sqs: LocalSqs;
let bus: LocalEventBridge;
let sqsClient: SQSClient;
let busClient: EventBridgeClient;
/** The stand-ins keep their state there, as under `npm start -- --data DIR`: `npm run redrive` finds them. */
const dataDir = mkdtempSync(join(tmpdir(), 'notify-redrive-'));

beforeAll(async () => {
  sqs = new LocalSqs({
    queues: [],
    workers: [],
    busFunctions: [sink],
    invoke: async (fn, event) => {
      invoked.push(event as { detail: unknown });
      if (failing) throw new LambdaInvocationError(fn.id, 'Error', 'the sink is down');
      return null;
    },
    log: () => {},
    dataDir,
  });
  await sqs.start();
  bus = new LocalEventBridge({ busName: BUS, rules: [rule], sqs, log: () => {}, dataDir });
  await bus.start();
  sqsClient = new SQSClient({ endpoint: sqs.endpoint, region: 'us-east-1', credentials });
  busClient = new EventBridgeClient({ endpoint: bus.endpoint, region: 'us-east-1', credentials });
});
afterAll(async () => {
  sqsClient?.destroy();
  busClient?.destroy();
  await bus?.stop();
  await sqs?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('redriving a bus function’s dead letters', () => {
  it('re-publishes the events of Lambda’s records and of EventBridge’s dead letters, and leaves the rest', async () => {
    const queueUrl = sqs.queueUrl('ordersSink-dlq');
    await busClient.send(
      new PutEventsCommand({
        Entries: [
          { EventBusName: BUS, Source: 'orders', DetailType: 'order.placed', Detail: '{"id":"o-1"}' },
        ],
      }),
    );
    // No retries declared: the failed invocation's record is in the DLQ at once.
    await waitUntil(() => sqs.stats('ordersSink-dlq').ApproximateNumberOfMessages === 1, 20);
    // EventBridge's own dead letter is the event itself; and a message that holds no event at all.
    const raw = {
      version: '0',
      id: 'e-2',
      source: 'orders',
      'detail-type': 'order.paid',
      detail: { id: 'o-2' },
    };
    await sqsClient.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(raw) }));
    const junk = await sqsClient.send(
      new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'not json' }),
    );

    failing = false;
    invoked.length = 0;
    const summary = await redriveDeadLetters({
      sqs: sqsClient,
      eventBridge: busClient,
      queueUrl,
      busName: BUS,
      visibilityTimeoutSecs: 30,
    });
    expect(summary).toEqual({ republished: 2, left: [{ messageId: junk.MessageId, reason: 'not JSON' }] });
    await waitUntil(() => invoked.length === 2, 20);
    expect(invoked.map((event) => event.detail)).toEqual(
      expect.arrayContaining([{ id: 'o-1' }, { id: 'o-2' }]),
    );
    expect(sqs.stats('ordersSink-dlq')).toMatchObject({
      ApproximateNumberOfMessages: 0,
      ApproximateNumberOfMessagesNotVisible: 1,
    });
    // The junk is a person's to read; gone here, so that the next test's redrive sees only its own record.
    await sqsClient.send(new PurgeQueueCommand({ QueueUrl: queueUrl }));
  });

  it('npm run redrive -- --data DIR --queue NAME reaches the running stand-ins through the data folder', async () => {
    failing = true;
    await busClient.send(
      new PutEventsCommand({
        Entries: [
          { EventBusName: BUS, Source: 'orders', DetailType: 'order.placed', Detail: '{"id":"o-3"}' },
        ],
      }),
    );
    await waitUntil(() => sqs.stats('ordersSink-dlq').ApproximateNumberOfMessages === 1, 20);
    failing = false;
    invoked.length = 0;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'bin/redrive.ts', '--data', dataDir, '--queue', 'ordersSink-dlq'],
      { cwd: join(import.meta.dirname, '../..') },
    );
    expect(stdout).toBe(`redrive: 1 event(s) put on ${BUS} again\n`);
    await waitUntil(() => invoked.length === 1, 20);
    expect(invoked[0]?.detail).toEqual({ id: 'o-3' });
  });

  it('reads the event out of either shape, and says why when there is none', () => {
    const event = { source: 's', 'detail-type': 't', detail: { a: 1 } };
    expect(
      deadEventOf(JSON.stringify({ version: '1.0', requestContext: {}, requestPayload: event })),
    ).toEqual(event);
    expect(deadEventOf(JSON.stringify(event))).toEqual(event);
    expect(deadEventOf(JSON.stringify({ requestContext: {}, requestPayload: null }))).toEqual({
      unreadable: 'no EventBridge event (source, detail-type, detail) in it',
    });
  });
});
