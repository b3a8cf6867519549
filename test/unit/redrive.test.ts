import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { PurgeQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deadLetterOf, rawJsonMember, redriveDeadLetters } from '../../lib/ops/redrive';
import { AWS_LIKE_ODDS, type Chooser, exactDelivery } from '../../local/delivery';
import { LocalLambda } from '../../local/lambda/local-lambda';
import { LambdaInvocationError, localFunctionName } from '../../local/lambda/runner';
import { LocalSqs } from '../../local/sqs/local-sqs';
import { waitUntil } from '../support/await';
import { ordersSink } from '../support/fixtures/wiring';

/**
 * The redrive of a bus function's DLQ (lib/ops/redrive.ts) against the stand-ins: the event of Lambda's
 * invocation record (its `requestPayload`) and of EventBridge's own dead letter (the body, its function in
 * `TARGET_ARN`) is invoked again on the function that failed it, through Lambda's Invoke (the LocalLambda
 * stand-in), unchanged; what names no function, holds no event or is refused by Lambda stays for a person.
 */
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const sink = ordersSink;
const DLQ = 'ordersSink-dlq';

let failing = true;
const invoked: unknown[] = [];
let sqs: LocalSqs;
let lambda: LocalLambda;
let sqsClient: SQSClient;
let lambdaClient: LambdaClient;
/** The stand-ins keep their state there, as under `npm start -- --data DIR`: `npm run redrive` finds them. */
const dataDir = mkdtempSync(join(tmpdir(), 'notify-redrive-'));

/** An event as EventBridge hands it to the function; a replay's has `replay-name`. */
const envelope = (id: string, extra: Record<string, unknown> = {}) => ({
  version: '0',
  id,
  'detail-type': 'order.placed',
  source: 'orders',
  account: '000000000000',
  time: '2026-11-20T10:00:00Z',
  region: 'us-east-1',
  resources: [],
  detail: { id: `o-${id}` },
  ...extra,
});

/** The event dies: the function fails (no retries declared), and Lambda's record is in the DLQ. */
const deadLetter = async (event: unknown) => {
  failing = true;
  const before = sqs.stats(DLQ).ApproximateNumberOfMessages;
  await lambda.invokeAsync(sink.id, event);
  await waitUntil(() => sqs.stats(DLQ).ApproximateNumberOfMessages === before + 1, 20);
};

const send = (body: string, attributes: Record<string, string> = {}) =>
  sqsClient.send(
    new SendMessageCommand({
      QueueUrl: sqs.queueUrl(DLQ),
      MessageBody: body,
      MessageAttributes: Object.fromEntries(
        Object.entries(attributes).map(([name, value]) => [name, { DataType: 'String', StringValue: value }]),
      ),
    }),
  );

/** How many of the next deletes from the DLQ leave a copy behind, as an SQS server that missed the delete would. */
let copiesLeft = 0;
const copyingDeletes: Chooser = {
  chance: (p) => p === AWS_LIKE_ODDS.duplicateAfterDelete && copiesLeft-- > 0,
  between: (min) => min,
  shuffled: (items) => [...items],
};

beforeAll(async () => {
  const exact = exactDelivery();
  sqs = new LocalSqs({
    // Exact, but for the copies a test asks the DLQ for.
    delivery: { ...exact, chooser: (name) => (name === `sqs:${DLQ}` ? copyingDeletes : exact.chooser(name)) },
    queues: [],
    log: () => {},
    dataDir,
  });
  lambda = new LocalLambda({
    sqs,
    workers: [],
    busFunctions: [sink],
    invoke: async (fn, event) => {
      invoked.push(event);
      if (failing) throw new LambdaInvocationError(fn.id, 'Error', 'the sink is down');
      return null;
    },
    log: () => {},
    dataDir,
  });
  await sqs.start();
  await lambda.start();
  sqsClient = new SQSClient({ endpoint: sqs.endpoint, region: 'us-east-1', credentials });
  lambdaClient = new LambdaClient({ endpoint: lambda.endpoint, region: 'us-east-1', credentials });
});
afterAll(async () => {
  sqsClient?.destroy();
  lambdaClient?.destroy();
  await lambda?.stop();
  await sqs?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});
beforeEach(async () => {
  // What a test left is a person's to read; gone here, so the next test's redrive sees only its own messages.
  await sqsClient.send(new PurgeQueueCommand({ QueueUrl: sqs.queueUrl(DLQ) }));
  invoked.length = 0;
});

/** What a stand-in for Lambda's Invoke endpoint answers to its n-th call (from 1). */
interface Answer {
  readonly status: number;
  readonly errorType?: string;
  readonly body: unknown;
  readonly delayMs?: number;
}

/** A Lambda Invoke endpoint that answers as told (throttling, wrong credentials…), for the real SDK client. */
const answeringLambda = async (answer: (call: number) => Answer) => {
  const calls: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      calls.push(Buffer.concat(chunks).toString('utf8'));
      const { status, errorType, body, delayMs = 0 } = answer(calls.length);
      setTimeout(() => {
        response.writeHead(status, {
          'content-type': 'application/json',
          ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
        });
        response.end(body === null ? '' : JSON.stringify(body));
      }, delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = new LambdaClient({
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    region: 'us-east-1',
    credentials,
    maxAttempts: 1,
  });
  return {
    client,
    calls,
    close: async () => {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

describe('redriving a bus function’s dead letters', () => {
  it('invokes the failed function again with the very event, and leaves what it cannot redrive', async () => {
    const replayed = envelope('e-1', { 'replay-name': 'nightly' });
    await deadLetter(replayed);
    // EventBridge's own dead letter: the event itself, its target in TARGET_ARN (with RULE_ARN and the error).
    const fromBus = envelope('e-2');
    await send(JSON.stringify(fromBus), {
      RULE_ARN: 'arn:aws:events:us-east-1:000000000000:rule/notify-redrive/orders-to-sink',
      TARGET_ARN: lambda.asyncFunctionArn(sink.id),
      ERROR_CODE: 'SDK_CLIENT_ERROR',
      ERROR_MESSAGE: 'Lambda throttled the invocation',
    });
    // Neither says which function; a record of a function that does not exist; not an event at all.
    const nameless = await send(JSON.stringify(envelope('e-3')));
    const gone = await send(
      JSON.stringify({
        version: '1.0',
        requestContext: {
          functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:notify-local-gone:$LATEST',
        },
        requestPayload: envelope('e-4'),
      }),
    );
    const junk = await send('not json');

    failing = false;
    invoked.length = 0;
    const summary = await redriveDeadLetters({
      sqs: sqsClient,
      lambda: lambdaClient,
      queueUrl: sqs.queueUrl(DLQ),
      visibilityTimeoutSecs: 30,
    });
    expect(summary.reinvoked).toBe(2);
    expect(summary.left).toEqual(
      expect.arrayContaining([
        { messageId: nameless.MessageId, reason: expect.stringContaining('names no function') },
        {
          messageId: gone.MessageId,
          reason: expect.stringMatching(/^Lambda refused it .*notify-local-gone.*ResourceNotFoundException/),
        },
        { messageId: junk.MessageId, reason: 'not JSON' },
      ]),
    );
    expect(summary.left).toHaveLength(3);
    // The same events: id, time and replay-name as the function first got them.
    await waitUntil(() => invoked.length === 2, 20);
    expect(invoked).toEqual(expect.arrayContaining([replayed, fromBus]));
    // What is left is shown again at the end of the run, for a person to read.
    expect(sqs.stats(DLQ)).toMatchObject({
      ApproximateNumberOfMessages: 3,
      ApproximateNumberOfMessagesNotVisible: 0,
    });
  });

  it('goes through Lambda’s asynchronous invocation again: an event that fails again is dead-lettered again', async () => {
    const event = envelope('e-5');
    await deadLetter(event);
    // Still failing: Lambda accepted it (the message is gone), and its new record is in the DLQ.
    const summary = await redriveDeadLetters({
      sqs: sqsClient,
      lambda: lambdaClient,
      queueUrl: sqs.queueUrl(DLQ),
    });
    expect(summary.reinvoked, JSON.stringify(summary)).toBe(1);
    // The new record is not taken again by the same redrive (that would loop while the sink is down): it carries
    // the request id of the redrive's own invocation. When it came in time to be received, it is listed.
    for (const { reason } of summary.left)
      expect(reason).toMatch(/^dead-lettered again after this redrive invoked it/);
    await waitUntil(() => {
      const stats = sqs.stats(DLQ);
      return stats.ApproximateNumberOfMessages + stats.ApproximateNumberOfMessagesNotVisible === 1;
    }, 20);
    expect(invoked).toEqual([event, event]);
  });

  it('deletes a copy of a message it already invoked again, without invoking it twice (SQS may hand out a deleted message once more)', async () => {
    await deadLetter(envelope('c-1'));
    await deadLetter(envelope('c-2'));
    failing = false;
    invoked.length = 0;
    copiesLeft = 2;
    const summary = await redriveDeadLetters({
      sqs: sqsClient,
      lambda: lambdaClient,
      queueUrl: sqs.queueUrl(DLQ),
    });
    copiesLeft = 0;
    expect(summary).toEqual({ reinvoked: 2, left: [] });
    await waitUntil(() => invoked.length === 2, 20);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(invoked).toHaveLength(2);
    expect(sqs.stats(DLQ)).toMatchObject({
      ApproximateNumberOfMessages: 0,
      ApproximateNumberOfMessagesNotVisible: 0,
    });
  });

  it('ends when Lambda keeps refusing, more slowly than the visibility timeout: each message tried once, listed once, visible again', async () => {
    // A Lambda that throttles every call after 150 ms: ten messages take longer than their 1 s visibility timeout.
    const lambdaApi = await answeringLambda(() => ({
      status: 429,
      errorType: 'TooManyRequestsException',
      body: {
        Type: 'User',
        message: 'Rate exceeded',
        Reason: 'ReservedFunctionConcurrentInvocationLimitExceeded',
      },
      delayMs: 150,
    }));
    try {
      for (let n = 0; n < 10; n += 1) await deadLetter(envelope(`t-${n}`));
      const summary = await redriveDeadLetters({
        sqs: sqsClient,
        lambda: lambdaApi.client,
        queueUrl: sqs.queueUrl(DLQ),
        visibilityTimeoutSecs: 1,
      });
      expect(summary.reinvoked).toBe(0);
      expect(new Set(summary.left.map(({ messageId }) => messageId)).size).toBe(10);
      expect(summary.left).toHaveLength(10);
      for (const { reason } of summary.left) expect(reason).toMatch(/TooManyRequestsException/);
      expect(lambdaApi.calls).toHaveLength(10);
      // Left for a person, and not hidden from the next look.
      expect(sqs.stats(DLQ).ApproximateNumberOfMessages).toBe(10);
    } finally {
      await lambdaApi.close();
    }
  }, 30_000);

  it.each(['ExpiredTokenException', 'UnrecognizedClientException', 'InvalidSignatureException'])(
    'stops at wrong credentials (%s), trying no other message, and shows what it left again',
    async (credentialError) => {
      const lambdaApi = await answeringLambda((calls) =>
        calls === 1
          ? {
              status: 404,
              errorType: 'ResourceNotFoundException',
              body: { Type: 'User', message: 'no function' },
            }
          : {
              status: 403,
              errorType: credentialError,
              body: { message: 'The credentials are not accepted' },
            },
      );
      try {
        for (let n = 0; n < 3; n += 1) await deadLetter(envelope(`x-${n}`));
        const run = redriveDeadLetters({
          sqs: sqsClient,
          lambda: lambdaApi.client,
          queueUrl: sqs.queueUrl(DLQ),
        });
        await expect(run).rejects.toMatchObject({ name: credentialError });
        expect(lambdaApi.calls).toHaveLength(2);
        // The one left (not found) and the two not tried are all there for the next run.
        expect(sqs.stats(DLQ).ApproximateNumberOfMessages).toBe(3);
      } finally {
        await lambdaApi.close();
      }
    },
  );

  it('leaves a message that Lambda answered with anything but 202 (not taken asynchronously)', async () => {
    const lambdaApi = await answeringLambda(() => ({ status: 200, body: null }));
    try {
      await deadLetter(envelope('s-1'));
      const summary = await redriveDeadLetters({
        sqs: sqsClient,
        lambda: lambdaApi.client,
        queueUrl: sqs.queueUrl(DLQ),
      });
      expect(summary.reinvoked).toBe(0);
      expect(summary.left).toEqual([
        {
          messageId: expect.any(String),
          reason: expect.stringMatching(/^Lambda answered 200 instead of 202/),
        },
      ]);
    } finally {
      await lambdaApi.close();
    }
  });

  it('npm run redrive -- --data DIR --queue NAME [--function NAME] reaches the running stand-ins through the data folder', async () => {
    await deadLetter(envelope('e-6'));
    await send(JSON.stringify(envelope('e-7')));
    await send('{"neither": "record nor event"}');
    failing = false;
    invoked.length = 0;
    const run = promisify(execFile)(
      process.execPath,
      [
        '--import',
        'tsx',
        'bin/redrive.ts',
        '--data',
        dataDir,
        '--queue',
        DLQ,
        '--function',
        localFunctionName(sink),
        '--bus',
        'notify-old',
      ],
      { cwd: join(import.meta.dirname, '../..') },
    );
    // What is left is listed and the exit code says so.
    const failure = (await run.then(
      () => undefined,
      (error: unknown) => error,
    )) as { code: number; stdout: string; stderr: string } | undefined;
    expect(failure?.code).toBe(2);
    expect(failure?.stdout).toMatch(
      /^redrive: 2 event\(s\) invoked again on their function\nleft [\w-]+: neither an invocation record nor an EventBridge event/,
    );
    expect(failure?.stderr).toContain('--bus is no longer used');
    await waitUntil(() => invoked.length === 2, 20);
    expect(invoked).toEqual(expect.arrayContaining([envelope('e-6'), envelope('e-7')]));
  }, 30_000);

  it('reads the event and its function out of either shape, with the event’s own bytes', () => {
    const arn = 'arn:aws:lambda:us-east-1:123456789012:function:notify-prod-BusWebhooksMatch-AbC';
    const payload = '{ "id": "e", "detail": {"n": 1.50, "s": "a,}\\"]"}, "list": [1, {"x": []}] }';
    const record = `{"version":"1.0","requestContext":{"functionArn":"${arn}:$LATEST","condition":"RetriesExhausted"},"requestPayload": ${payload} ,"responsePayload":{"errorType":"Error"}}`;
    expect(deadLetterOf(record)).toEqual({ payload, functionName: arn });
    const event = '{"source":"s","detail-type":"t","detail":{"a":1.0}}';
    expect(deadLetterOf(event, { TARGET_ARN: { DataType: 'String', StringValue: arn } })).toEqual({
      payload: event,
      functionName: arn,
    });
    expect(deadLetterOf(event)).toEqual({ payload: event, functionName: undefined });
    expect(deadLetterOf(JSON.stringify({ requestContext: {}, requestPayload: null }))).toEqual({
      unreadable: 'an invocation record without an event (requestPayload)',
    });
    expect(deadLetterOf('[1]')).toEqual({ unreadable: 'not a JSON object' });
    // A record naming no function (or an odd request id) still carries its event.
    expect(deadLetterOf(`{"requestContext":{"requestId":7},"requestPayload":${payload}}`)).toEqual({
      payload,
      functionName: undefined,
    });
    expect(deadLetterOf(`{"requestContext":{"requestId":"r-1"},"requestPayload":${payload}}`)).toEqual({
      payload,
      functionName: undefined,
      requestId: 'r-1',
    });
    expect(deadLetterOf('{"requestContext":{},"requestPayload":"text"}')).toEqual({
      unreadable: 'an invocation record without an event (requestPayload)',
    });
    // Neither shape: what an event lacks is named.
    const neither = {
      unreadable: 'neither an invocation record nor an EventBridge event (source, detail-type, detail)',
    };
    expect(deadLetterOf('{"neither":"record nor event"}')).toEqual(neither);
    expect(deadLetterOf('{"detail-type":"t","detail":{}}')).toEqual(neither);
    expect(deadLetterOf('{"source":"s","detail":{}}')).toEqual(neither);
    expect(deadLetterOf('{"source":"s","detail-type":"t","detail":[1]}')).toEqual(neither);
    expect(deadLetterOf('{"source":"s","detail-type":"t","detail":null}')).toEqual(neither);
    expect(rawJsonMember('[{"a":1}]', 'a')).toBeUndefined();
    expect(rawJsonMember('{ "a" : 1 , "b" : 2 }', 'b')).toBe('2');
    expect(rawJsonMember('{"a":1,"b":"x","a": [2] }', 'a')).toBe('[2]');
    expect(rawJsonMember('{"a":1}', 'b')).toBeUndefined();
  });
});
