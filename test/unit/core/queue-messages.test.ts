/**
 * One schema per queue (lambdas/core/message-queue.ts): `enqueue` refuses what its queue's schema refuses, and the
 * worker wrapper hands a handler only messages its queue's schema reads; a malformed one is logged with its id and
 * the reason, and failed for SQS (so it ends in the queue's DLQ) without reaching the handler.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { logger } from '../../../lambdas/core/logger';
import {
  MalformedMessage,
  type MessageQueue,
  messageBody,
  readMessage,
} from '../../../lambdas/core/message-queue';
import { enqueue } from '../../../lambdas/core/sqs-send';
import { sqsWorker } from '../../../lambdas/core/workers';
import { type FanoutMessage, fanoutQueue } from '../../../lambdas/domain/notifications/fanout-messages';
import { pushRecipientsQueue } from '../../../lambdas/domain/push/hand-over';
import { pushQueue } from '../../../lambdas/domain/push/messages';
import { broadcastQueue } from '../../../lambdas/domain/realtime/broadcast-queue';
import { presenceSummaryQueue } from '../../../lambdas/domain/realtime/presence-summary-message';
import { sweepQueue } from '../../../lambdas/domain/realtime/sweep-schedule';
import { authDeadlineQueue } from '../../../lambdas/domain/realtime/sweeper';
import { welcomeQueue } from '../../../lambdas/domain/realtime/welcome';
import { deliveryQueue } from '../../../lambdas/domain/webhooks/deliveries';
import { wiring } from '../../../lib/wiring';
import { sqsRecord, workerContext } from '../../support/queues';

/** Every queue's definition, with a message its senders send and ones no sender may. */
const QUEUES: {
  queue: MessageQueue<unknown>;
  valid: unknown;
  malformed: { body: string; reason: RegExp }[];
}[] = [
  {
    queue: fanoutQueue as MessageQueue<unknown>,
    valid: { kind: 'chunk', notification_id: 'n1', recipients: ['u1'], topic: 'news' },
    malformed: [
      { body: '{"kind":"chunk","notification_id":"n1"}', reason: /recipients/ },
      { body: '{"kind":"burst","notification_id":"n1"}', reason: /kind/ },
    ],
  },
  {
    queue: pushQueue as MessageQueue<unknown>,
    valid: { kind: 'recipients', notification_id: 'n1', recipients: ['u1'] },
    malformed: [
      { body: '{"kind":"recipients","notification_id":"n1","recipients":[]}', reason: /recipients/ },
      {
        body: '{"kind":"attempt","notification_id":"n1","user_id":"u1","token_hash":"h","attempt":1}',
        reason: /attempt/,
      },
    ],
  },
  {
    queue: deliveryQueue as MessageQueue<unknown>,
    valid: { webhook_id: 'w1', delivery_id: 'd1', shard: 2, run: 0, attempt: 3, rest_secs: 12.5 },
    malformed: [
      { body: '{"webhook_id":"w1","delivery_id":"d1","run":0,"attempt":1.5}', reason: /attempt/ },
      { body: '{"webhook_id":"w1","delivery_id":"d1","run":0,"attempt":1,"shard":-1}', reason: /shard/ },
    ],
  },
  {
    queue: broadcastQueue as MessageQueue<unknown>,
    valid: {
      kind: 'channel',
      channel: 'room:lobby',
      frame: { type: 'deal', price: 3 },
      startKey: { a: 'b' },
    },
    malformed: [
      { body: '{"kind":"channel","channel":"room:lobby","frame":{"price":3}}', reason: /frame/ },
      { body: '{"kind":"presence.summary","room":"lobby"}', reason: /.+/ },
    ],
  },
  {
    queue: authDeadlineQueue as MessageQueue<unknown>,
    valid: { connection_id: 'c1' },
    malformed: [{ body: '{"connection":"c1"}', reason: /connection_id/ }],
  },
  {
    queue: sweepQueue as MessageQueue<unknown>,
    valid: { shard: 's03', at: 1, later: [20, 40], alive: { '1700000000': ['c1'] } },
    malformed: [{ body: '{"shard":"s01","later":[-20]}', reason: /later/ }],
  },
  {
    queue: welcomeQueue as MessageQueue<unknown>,
    valid: { connection_id: 'c1', session_id: 's1', user_id: 'u1' },
    malformed: [{ body: '{"connection_id":7}', reason: /connection_id/ }],
  },
];

const NOT_JSON = [
  { body: 'not json at all', reason: /^not JSON/ },
  { body: '', reason: /^not JSON/ },
  { body: '[]', reason: /message/ },
  { body: 'null', reason: /message/ },
];

describe('queue message schemas', () => {
  it('declare each queue of the wiring once', () => {
    expect(QUEUES.map(({ queue }) => queue.id).sort()).toEqual(wiring.queues.map((queue) => queue.id).sort());
  });

  it.each(QUEUES)('$queue.id: what its senders send goes through unchanged', ({ queue, valid }) => {
    expect(readMessage(queue, messageBody(queue, valid))).toEqual({ ok: true, message: valid });
  });

  it.each(QUEUES)('$queue.id: a malformed message is refused when sent', async ({ queue, malformed }) => {
    for (const { body } of malformed) {
      expect(() => messageBody(queue, JSON.parse(body))).toThrow(MalformedMessage);
      // Before anything reaches SQS (no queue URL is set here: a send would fail otherwise).
      await expect(enqueue(queue, [JSON.parse(body)])).rejects.toBeInstanceOf(MalformedMessage);
    }
  });
});

describe("a sender's view of another area's queue (one kind, in a module of its own)", () => {
  it.each([
    { view: presenceSummaryQueue as MessageQueue<unknown>, queue: broadcastQueue as MessageQueue<unknown> },
    { view: pushRecipientsQueue as MessageQueue<unknown>, queue: pushQueue as MessageQueue<unknown> },
  ])('$view.id: its kinds are kinds of the queue, so its worker reads what it sends', ({ view, queue }) => {
    expect(view.id).toBe(queue.id);
    expect(view.kinds.length).toBeLessThan(queue.kinds.length);
    for (const kind of view.kinds) expect(queue.kinds).toContain(kind);
  });
});

describe('a queue of several kinds of message', () => {
  it("is checked, when sent, against the kind the message names: its reasons are told, not the other kinds'", () => {
    const chunkWithoutRecipients = { kind: 'chunk', notification_id: 'n1' } as unknown as FanoutMessage;
    expect(() => messageBody(fanoutQueue, chunkWithoutRecipients)).toThrow(
      'not a fanout message: recipients: must be an array',
    );
    expect(() => messageBody(fanoutQueue, { kind: 'burst' } as unknown as FanoutMessage)).toThrow(/kind/);
  });
});

describe('the worker wrapper', () => {
  afterEach(() => vi.restoreAllMocks());

  it.each(QUEUES)(
    '$queue.id: a malformed message never reaches the handler, is logged with its id and reason, and fails for SQS',
    async ({ queue, valid, malformed }) => {
      const errors: { message: unknown; attributes: Record<string, unknown> }[] = [];
      vi.spyOn(logger, 'error').mockImplementation((message: unknown, ...rest: unknown[]) => {
        errors.push({ message, attributes: (rest[0] ?? {}) as Record<string, unknown> });
      });
      const handled: unknown[] = [];
      const handler = sqsWorker('test.worker', queue, async (message) => {
        handled.push(message);
      });
      const bad = [...NOT_JSON, ...malformed].map((entry, index) => ({ ...entry, id: `bad-${index}` }));
      const result = await handler(
        {
          Records: [
            sqsRecord('good', messageBody(queue, valid), 2),
            ...bad.map((entry) => sqsRecord(entry.id, entry.body, 2)),
          ],
        },
        workerContext,
      );
      expect(handled).toEqual([valid]);
      expect(result.batchItemFailures.map((failure) => failure.itemIdentifier).sort()).toEqual(
        bad.map((entry) => entry.id).sort(),
      );
      for (const entry of bad) {
        const logged = errors.filter(({ attributes }) => attributes.message_id === entry.id);
        expect(logged).toEqual([
          {
            message: 'malformed message',
            attributes: {
              message_id: entry.id,
              receive_count: '2',
              queue: queue.id,
              reason: expect.any(String),
            },
          },
        ]);
        expect(logged[0]?.attributes.reason).toMatch(entry.reason);
      }
    },
  );
});
