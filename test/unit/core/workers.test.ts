/**
 * The shared worker wrapper (lambdas/core/workers.ts): each record on its own, a failure reported for that
 * message alone (`batchItemFailures`), so SQS redelivers only it.
 */
import type { SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { logger } from '../../../lambdas/core/logger';
import { HeldByOtherReceive } from '../../../lambdas/core/message-handling';
import { messageQueue } from '../../../lambdas/core/message-queue';
import { busWorker, queueAndInvokedWorker, sqsWorker } from '../../../lambdas/core/workers';
import * as z from '../../../lambdas/core/zod';
import { FramesHeldByOtherReceive } from '../../../lambdas/domain/notifications/delivery';
import { AttemptHeldByOtherReceive } from '../../../lambdas/domain/webhooks/deliver';
import { recordFunctionLogs } from '../../support/function-logs';
import { sqsRecord, workerContext } from '../../support/queues';

/** A record whose body is `body` as JSON (a message of `textQueue`). */
const record = (id: string, body: string) => sqsRecord(id, JSON.stringify(body));

/** A queue of JSON strings. */
const textQueue = messageQueue('test', z.string());

const context = workerContext;

describe('sqsWorker', () => {
  it('processes every record side by side and reports only the failed ones', async () => {
    const seen: string[] = [];
    let inFlight = 0;
    let mostInFlight = 0;
    const handler = sqsWorker('test.worker', textQueue, async (body) => {
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
    const logs = recordFunctionLogs();
    expect(await handler(event, context)).toEqual({
      batchItemFailures: [{ itemIdentifier: 'm2' }, { itemIdentifier: 'm4' }],
    });
    // Each failed message is logged with its id and error (it ends in the DLQ after its last receive).
    expect(
      logs.at('ERROR').map(({ message, message_id, error }) => ({ message, message_id, error })),
    ).toEqual([
      {
        message: 'message failed',
        message_id: 'm2',
        error: expect.objectContaining({ message: 'cannot process bad-2' }),
      },
      {
        message: 'message failed',
        message_id: 'm4',
        error: expect.objectContaining({ message: 'cannot process bad-4' }),
      },
    ]);
    expect(seen.sort()).toEqual(['bad-2', 'bad-4', 'ok-1', 'ok-3']);
    expect(mostInFlight).toBe(4);
  });

  it('reports no failure for a batch that went through, and every message of one that did not', async () => {
    const fine = sqsWorker('test.worker', textQueue, async () => undefined);
    expect(await fine({ Records: [record('a', 'x'), record('b', 'y')] }, context)).toEqual({
      batchItemFailures: [],
    });
    const broken = sqsWorker('test.worker', textQueue, async () => {
      throw new Error('down');
    });
    const logs = recordFunctionLogs();
    expect(await broken({ Records: [record('a', 'x'), record('b', 'y')] }, context)).toEqual({
      batchItemFailures: [{ itemIdentifier: 'a' }, { itemIdentifier: 'b' }],
    });
    expect(logs.at('ERROR').map((logged) => logged.message_id)).toEqual(['a', 'b']);
  });

  describe('a message held by another receive of it (a duplicate handed out at once)', () => {
    afterEach(() => vi.restoreAllMocks());

    /** What the worker logged, by level: the message and its attributes. */
    const capture = () => {
      const logged: { level: string; message: unknown; attributes: Record<string, unknown> }[] = [];
      for (const level of ['error', 'warn'] as const) {
        vi.spyOn(logger, level).mockImplementation((message: unknown, ...rest: unknown[]) => {
          logged.push({ level, message, attributes: (rest[0] ?? {}) as Record<string, unknown> });
        });
      }
      return logged;
    };

    it('is retried later by design: failed for SQS, logged as a warning with its reason and no stack', async () => {
      const logged = capture();
      const handler = sqsWorker('test.worker', textQueue, async (body) => {
        if (body === 'held')
          throw new HeldByOtherReceive('held by another receive until 12:00; retried later');
        throw new Error('broken');
      });
      expect(await handler({ Records: [record('a', 'held'), record('b', 'other')] }, context)).toEqual({
        batchItemFailures: [{ itemIdentifier: 'a' }, { itemIdentifier: 'b' }],
      });
      expect(logged.find(({ attributes }) => attributes.message_id === 'a')).toEqual({
        level: 'warn',
        message: 'message held by another receive; retried later',
        attributes: {
          message_id: 'a',
          receive_count: '1',
          reason: 'held by another receive until 12:00; retried later',
        },
      });
      // A real failure is still an error, with the error itself.
      expect(logged.find(({ attributes }) => attributes.message_id === 'b')).toMatchObject({
        level: 'error',
        message: 'message failed',
        attributes: { error: expect.any(Error) },
      });
    });

    it('is what the fan-out and the webhook delivery throw when a duplicate holds the work', () => {
      expect(new FramesHeldByOtherReceive('u1', 0)).toBeInstanceOf(HeldByOtherReceive);
      const message = { delivery_id: 'd1', attempt: 2 } as ConstructorParameters<
        typeof AttemptHeldByOtherReceive
      >[0];
      expect(new AttemptHeldByOtherReceive(message, undefined)).toBeInstanceOf(HeldByOtherReceive);
    });

    it('is a warning in a bus function too, and still fails the invocation so Lambda retries the event', async () => {
      const logged = capture();
      const handler = busWorker('test.bus', async () => {
        throw new HeldByOtherReceive('held elsewhere');
      });
      const event = { id: 'event-1' } as Parameters<typeof handler>[0];
      await expect(handler(event, context)).rejects.toBeInstanceOf(HeldByOtherReceive);
      expect(logged).toEqual([
        {
          level: 'warn',
          message: 'event held by another invocation; retried later',
          attributes: { event_id: 'event-1', reason: 'held elsewhere' },
        },
      ]);
    });
  });
});

describe('queueAndInvokedWorker', () => {
  /** A queue of messages of one kind, as the push queue's are. */
  const kindQueue = messageQueue('kinds', [z.object({ kind: z.literal('greet'), name: z.string() })]);
  const invokedContext = { ...workerContext, awsRequestId: 'invocation-1' } as typeof workerContext;
  /** A worker that notes each message it gets, with its handling. */
  const recordingWorker = () => {
    const seen: unknown[] = [];
    const handler = queueAndInvokedWorker(
      'test.invoked',
      kindQueue,
      async (message, handling) => {
        seen.push({ message, messageId: handling.messageId, redeliveredBy: handling.redeliveredBy });
      },
      ({ kind }) => ({ kind }),
    );
    return { seen, handler };
  };

  it('takes a message as an asynchronous invocation’s event, held under the request id Lambda keeps across retries', async () => {
    const { seen, handler } = recordingWorker();
    expect(await handler({ kind: 'greet', name: 'ann' }, invokedContext)).toBeUndefined();
    expect(seen).toEqual([
      { message: { kind: 'greet', name: 'ann' }, messageId: 'invocation-1', redeliveredBy: 'lambda' },
    ]);
  });

  it('fails an invocation whose event is no message of the queue, or whose message failed, logged with the reason', async () => {
    const logs = recordFunctionLogs();
    const handler = queueAndInvokedWorker(
      'test.invoked',
      kindQueue,
      async () => {
        throw new Error('cannot greet');
      },
      ({ kind }) => ({ kind }),
    );
    await expect(handler({ kind: 'greet' }, invokedContext)).rejects.toThrow(/not a kinds message: name/);
    await expect(handler({ kind: 'greet', name: 'ben' }, invokedContext)).rejects.toThrow('cannot greet');
    expect(
      logs.at('ERROR').map(({ message, reason, kind, error }) => ({ message, reason, kind, error })),
    ).toEqual([
      {
        message: 'malformed message',
        reason: expect.stringContaining('name'),
        kind: undefined,
        error: undefined,
      },
      {
        message: 'message failed',
        reason: undefined,
        kind: 'greet',
        error: expect.objectContaining({ message: 'cannot greet' }),
      },
    ]);
  });

  it('reads a batch from the queue as sqsWorker does, a redriven on-failure record as the message it holds', async () => {
    const { seen, handler } = recordingWorker();
    const onFailureRecord = {
      version: '1.0',
      timestamp: new Date().toISOString(),
      requestContext: {
        requestId: 'r-1',
        functionArn: 'arn',
        condition: 'RetriesExhausted',
        approximateInvokeCount: 3,
      },
      requestPayload: { kind: 'greet', name: 'cy' },
    };
    const event: SQSEvent = {
      Records: [
        sqsRecord('m1', JSON.stringify({ kind: 'greet', name: 'ann' })),
        sqsRecord('m2', JSON.stringify(onFailureRecord)),
      ],
    };
    expect(await handler(event, context)).toEqual({ batchItemFailures: [] });
    expect(seen).toEqual([
      { message: { kind: 'greet', name: 'ann' }, messageId: 'm1', redeliveredBy: 'queue' },
      { message: { kind: 'greet', name: 'cy' }, messageId: 'm2', redeliveredBy: 'queue' },
    ]);
  });
});
