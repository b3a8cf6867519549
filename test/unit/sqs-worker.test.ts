/**
 * The shared worker wrapper (lambdas/core/sqs-worker.ts): each record on its own, a failure reported for that
 * message alone (`batchItemFailures`), so SQS redelivers only it.
 */
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { sqsWorker } from '../../lambdas/core/sqs-worker';

const record = (id: string, body: string): SQSRecord =>
  ({
    messageId: id,
    receiptHandle: `handle-${id}`,
    body,
    attributes: { ApproximateReceiveCount: '1' },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:test',
    awsRegion: 'us-east-1',
  }) as unknown as SQSRecord;

const context = { awsRequestId: 'request-1', getRemainingTimeInMillis: () => 30_000 } as unknown as Context;

describe('sqsWorker', () => {
  it('processes every record side by side and reports only the failed ones', async () => {
    const seen: string[] = [];
    let inFlight = 0;
    let mostInFlight = 0;
    const handler = sqsWorker('test.worker', async (body) => {
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 10));
      inFlight -= 1;
      seen.push(body);
      if (body.startsWith('bad')) throw new Error(`cannot process ${body}`);
    });
    const event: SQSEvent = {
      Records: [record('m1', 'ok-1'), record('m2', 'bad-2'), record('m3', 'ok-3'), record('m4', 'bad-4')],
    };
    expect(await handler(event, context)).toEqual({
      batchItemFailures: [{ itemIdentifier: 'm2' }, { itemIdentifier: 'm4' }],
    });
    expect(seen.sort()).toEqual(['bad-2', 'bad-4', 'ok-1', 'ok-3']);
    expect(mostInFlight).toBe(4);
  });

  it('reports no failure for a batch that went through, and every message of one that did not', async () => {
    const fine = sqsWorker('test.worker', async () => undefined);
    expect(await fine({ Records: [record('a', 'x'), record('b', 'y')] }, context)).toEqual({
      batchItemFailures: [],
    });
    const broken = sqsWorker('test.worker', async () => {
      throw new Error('down');
    });
    expect(await broken({ Records: [record('a', 'x'), record('b', 'y')] }, context)).toEqual({
      batchItemFailures: [{ itemIdentifier: 'a' }, { itemIdentifier: 'b' }],
    });
  });
});
