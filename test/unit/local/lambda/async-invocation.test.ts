import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import type { BusFunction } from '../../../../lib/wiring';
import type { InvocationRecord } from '../../../../local/lambda/async-invocation';
import { LocalLambda } from '../../../../local/lambda/local-lambda';
import { LambdaInvocationError } from '../../../../local/lambda/runner';
import type { InvokeFunction } from '../../../../local/lambda/types';
import { LocalSqs } from '../../../../local/sqs/local-sqs';
import { waitUntil } from '../../../support/await';

/**
 * The local stand-in for Lambda's asynchronous invocation (local/lambda/async-invocation.ts): one event per
 * invocation under one request id, two retries after a failure, then Lambda's invocation record in the
 * on-failure queue; the queue is journaled, so an accepted event survives a restart.
 */

const busFunction: BusFunction = {
  id: 'events.sink',
  handler: 'test/fixture.ts',
  // A retry comes no sooner than the failed invocation's deadline + 6 s (as on AWS, where it comes a minute later).
  timeoutSecs: 1,
  retryAttempts: 2,
  maxEventAgeSecs: 21_600,
  deadLetterQueue: 'sink',
  purpose: 'fixture',
};

interface Call {
  readonly event: unknown;
  readonly requestId: string | undefined;
  readonly at: number;
}

const running: { readonly sqs: LocalSqs; readonly lambda: LocalLambda }[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const { sqs, lambda } of running.splice(0)) {
    await lambda.stop();
    await sqs.stop();
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The stand-ins (SQS keeps the queues, Lambda invokes from them) with a function failing its first `failures`. */
const start = async (
  failures: number,
  options: { readonly dataDir?: string; readonly asyncRetryAfterDeadlineMs?: number } = {},
) => {
  const calls: Call[] = [];
  const invoke: InvokeFunction = async (fn, event, invokeOptions) => {
    calls.push({ event, requestId: invokeOptions?.requestId, at: Date.now() });
    const seen = calls.filter((call) => call.requestId === invokeOptions?.requestId).length;
    if (seen <= failures) throw new LambdaInvocationError(fn.id, 'Error', `failure ${seen}`);
    return null;
  };
  const { dataDir, asyncRetryAfterDeadlineMs } = options;
  const sqs = new LocalSqs({ queues: [], timeScale: 0.001, log: () => {}, dataDir });
  const lambda = new LocalLambda({
    sqs,
    workers: [],
    busFunctions: [busFunction],
    invoke,
    log: () => {},
    asyncRetryAfterDeadlineMs,
  });
  await sqs.start();
  await lambda.start();
  running.push({ sqs, lambda });
  return { sqs, lambda, calls };
};

const onFailureRecords = async (sqs: LocalSqs): Promise<InvocationRecord[]> => {
  const client = new SQSClient({
    endpoint: sqs.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    const received = await client.send(
      new ReceiveMessageCommand({ QueueUrl: sqs.queueUrl('sink-dlq'), MaxNumberOfMessages: 10 }),
    );
    return (received.Messages ?? []).map((message) => JSON.parse(message.Body ?? '') as InvocationRecord);
  } finally {
    client.destroy();
  }
};

const event = { id: 'evt-1', 'detail-type': 'order.created', detail: { id: 'e1' } };

/**
 * Where a test is not about when a retry comes: its function takes no holds, so the 6 s of slack after the
 * deadline (which the test of retries keeps) need not be waited out.
 */
const SHORT_RETRY_WAIT = { asyncRetryAfterDeadlineMs: 200 } as const;

describe('local asynchronous invocation', () => {
  it('invokes the function with the event under the request id it answered with, once', async () => {
    const { sqs, lambda, calls } = await start(0);
    const requestId = await lambda.invokeAsync(busFunction.id, event);
    await waitUntil(() => calls.length === 1, 50);
    expect(calls[0]).toMatchObject({ event, requestId });
    await waitUntil(() => lambda.asyncBacklog() === 0, 50);
    expect(await onFailureRecords(sqs)).toEqual([]);
    // Lambda's own queue is not an SQS queue of the account: nothing of it is billed or listed.
    expect(Object.keys(sqs.counters())).toEqual(['sink-dlq']);
    expect(sqs.counters()['sink-dlq']?.requests).toBe(1); // the test's ReceiveMessage
  });

  it('retries a failed invocation with the same request id, after the failed invocation’s deadline', async () => {
    const { sqs, lambda, calls } = await start(2);
    const requestId = await lambda.invokeAsync(busFunction.id, event);
    await waitUntil(() => calls.length === 3, 50);
    expect(calls.map((call) => call.requestId)).toEqual([requestId, requestId, requestId]);
    for (const [index, call] of calls.slice(1).entries()) {
      expect(call.at - (calls[index]?.at ?? 0)).toBeGreaterThanOrEqual(1_000 + 6_000 - 50);
    }
    await waitUntil(() => lambda.asyncBacklog() === 0, 50);
    expect(await onFailureRecords(sqs)).toEqual([]);
  }, 40_000);

  it('sends Lambda’s invocation record to the on-failure queue once every retry failed', async () => {
    const { sqs, lambda, calls } = await start(5, SHORT_RETRY_WAIT);
    const requestId = await lambda.invokeAsync(busFunction.id, event);
    await waitUntil(() => sqs.stats('sink-dlq').ApproximateNumberOfMessages === 1, 50);
    expect(calls).toHaveLength(3);
    const [record, ...others] = await onFailureRecords(sqs);
    expect(others).toEqual([]);
    expect(record).toMatchObject({
      version: '1.0',
      requestContext: {
        requestId,
        functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:notify-local-events-sink:$LATEST',
        condition: 'RetriesExhausted',
        approximateInvokeCount: 3,
      },
      requestPayload: event,
      responseContext: { statusCode: 200, executedVersion: '$LATEST', functionError: 'Unhandled' },
      responsePayload: { errorType: 'Error', errorMessage: 'failure 3' },
    });
    expect(Date.parse(record?.timestamp ?? '')).not.toBeNaN();
    expect(lambda.asyncBacklog()).toBe(0);
  }, 40_000);

  it('keeps an accepted event across a restart and invokes it after, under the same request id', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'local-async-'));
    dirs.push(dataDir);
    const first = await start(0, { dataDir });
    // Accepted (on disk) but not yet due when the runtime stops.
    const requestId = await first.lambda.invokeAsync(busFunction.id, event, 2_000);
    await first.lambda.stop();
    await first.sqs.stop();
    running.splice(
      running.findIndex(({ sqs }) => sqs === first.sqs),
      1,
    );
    expect(first.calls).toEqual([]);

    const second = await start(0, { dataDir });
    expect(second.lambda.asyncBacklog()).toBe(1);
    await waitUntil(() => second.calls.length === 1, 50);
    expect(second.calls[0]).toMatchObject({ event, requestId });
    await waitUntil(() => second.lambda.asyncBacklog() === 0, 50);
  }, 30_000);

  it('invokes again, as a retry, an event whose invocation was cut off by a restart (the cut-off one counts), once that invocation’s deadline is past', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'local-async-'));
    dirs.push(dataDir);
    const calls: Call[] = [];
    let release: () => void = () => {};
    const hung = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = new LocalSqs({ queues: [], timeScale: 0.001, log: () => {}, dataDir });
    const firstLambda = new LocalLambda({
      sqs: first,
      workers: [],
      busFunctions: [busFunction],
      invoke: async (_fn, invoked, invokeOptions) => {
        calls.push({ event: invoked, requestId: invokeOptions?.requestId, at: Date.now() });
        await hung; // never settles before the stop: the process "crashed" mid-invocation
      },
      stopGraceMs: 10,
      log: () => {},
    });
    await first.start();
    await firstLambda.start();
    const acceptedAt = Date.now();
    const requestId = await firstLambda.invokeAsync(busFunction.id, event);
    await waitUntil(() => calls.length === 1, 50);
    await firstLambda.stop();
    await first.stop();
    // Every invocation after the restart fails: as on AWS, the cut-off one was attempt 1 of 3, so two remain.
    const second = await start(Number.POSITIVE_INFINITY, { dataDir, ...SHORT_RETRY_WAIT });
    await waitUntil(() => second.calls.length === 1, 50);
    expect(second.calls[0]).toMatchObject({ event, requestId });
    // Not before the cut-off invocation's deadline and the slack of what it held (a claim), counted from its
    // receive (after the event was accepted): the event stayed hidden across the restart, as Lambda's retry of a
    // dead invocation comes a minute later.
    expect((second.calls[0]?.at ?? 0) - acceptedAt).toBeGreaterThanOrEqual(1_000 + 6_000);
    await waitUntil(() => second.sqs.stats('sink-dlq').ApproximateNumberOfMessages === 1, 50);
    const [record] = await onFailureRecords(second.sqs);
    expect(record?.requestContext).toMatchObject({
      requestId,
      condition: 'RetriesExhausted',
      approximateInvokeCount: 3,
    });
    expect(second.calls).toHaveLength(2);
    release();
  }, 40_000);

  it('refuses a Lambda stand-in made once the SQS stand-in is starting (its queues would miss the restore)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'local-async-'));
    dirs.push(dataDir);
    const sqs = new LocalSqs({ queues: [], log: () => {}, dataDir });
    const starting = sqs.start();
    expect(
      () => new LocalLambda({ sqs, workers: [], busFunctions: [busFunction], invoke: async () => null }),
    ).toThrow(/before start/);
    await starting;
    await sqs.stop();
  });

  it('stops Lambda’s pollers when the SQS stand-in stops first: nothing is invoked from a closed journal', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'local-async-'));
    dirs.push(dataDir);
    const { sqs, lambda, calls } = await start(0, { dataDir });
    await sqs.stop();
    await expect(lambda.invokeAsync(busFunction.id, event)).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(calls).toEqual([]);
  });

  it('cannot be started again once stopped, as the SQS stand-in cannot', async () => {
    const { lambda } = await start(0);
    await lambda.stop();
    await expect(lambda.start()).rejects.toThrow(/cannot restart/);
  });
});
