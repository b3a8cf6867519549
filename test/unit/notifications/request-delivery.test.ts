import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it, vi } from 'vitest';
import { documentClient, tableName } from '../../../lambdas/core/clients';
import type { Principal } from '../../../lambdas/core/principal';
import { parseOrThrow } from '../../../lambdas/core/validation';
import {
  createNotification,
  REQUEST_DELIVERY_MAX_RECIPIENTS,
} from '../../../lambdas/domain/notifications/create';
import { processFanoutMessage } from '../../../lambdas/domain/notifications/fanout';
import { fanoutQueue } from '../../../lambdas/domain/notifications/fanout-messages';
import { createNotificationSchema } from '../../../lambdas/domain/notifications/schema';
import { PUSH_WORKER } from '../../../lambdas/domain/push/hand-over';
import { waitUntil } from '../../support/await';
import { receiverCount, useDynamoDbLocal } from '../../support/dynamodb';
import { handlingOf, useQueuesWithoutWorkers } from '../../support/queues';

/**
 * A small list of named recipients is delivered by the accepting request itself (docs/notifications.md,
 * "Flow"): on DynamoDB Local and the real queue stand-in, without workers, so what the request did is
 * exactly what is stored and queued when it returns.
 */
useDynamoDbLocal();

const service: Principal = { kind: 'service', id: 'crm', scopes: ['notifications:write'], expiresAt: 0 };
const queues = useQueuesWithoutWorkers();

/** Takes every message off the fan-out queue (each is received once). */
const takeQueued = () => queues.take(fanoutQueue);

let seq = 0;
const unique = (prefix: string) => {
  seq += 1;
  return `${prefix}-${Date.now()}-${seq}`;
};
const users = (count: number) => Array.from({ length: count }, () => unique('u'));
const body = (recipients: readonly string[], extra: Record<string, unknown> = {}) =>
  parseOrThrow(createNotificationSchema, {
    event_type: 'order.shipped',
    title: 'Shipped',
    channels: ['in_app', 'toast'],
    recipient_ids: recipients,
    ...extra,
  });

describe('delivery inside the accepting request', () => {
  it(`stores every feed item of up to ${REQUEST_DELIVERY_MAX_RECIPIENTS} recipients before it answers, queueing nothing`, async () => {
    const recipients = users(REQUEST_DELIVERY_MAX_RECIPIENTS);
    const created = await createNotification(service, body(recipients), unique('n'));
    expect(created.status).toBe(202);
    for (const userId of recipients) expect(await receiverCount(userId)).toBe(1);
    expect(await takeQueued()).toEqual([]);
  });

  it('queues a larger list (and topics) for the fan-out worker, as before', async () => {
    const recipients = users(REQUEST_DELIVERY_MAX_RECIPIENTS + 1);
    const id = unique('n');
    await createNotification(service, body(recipients), id);
    expect(await receiverCount(recipients[0] as string)).toBe(0);
    const queued = await takeQueued();
    expect(queued.map(({ message }) => message)).toEqual([
      { kind: 'chunk', notification_id: id, recipients },
    ]);
  });

  it('run again for the same id (an Idempotency-Key retry after a crash) still leaves one feed item each', async () => {
    const recipients = users(3);
    const id = unique('n');
    await createNotification(service, body(recipients), id);
    await createNotification(service, body(recipients), id);
    for (const userId of recipients) expect(await receiverCount(userId)).toBe(1);
    expect(await takeQueued()).toEqual([]);
  });

  it('queues exactly the recipients it could not deliver, under its own delivery id, and still answers 202', async () => {
    const [ann, ben, cy] = users(3) as [string, string, string];
    const id = unique('n');
    const client = documentClient();
    const send = client.send.bind(client);
    // DynamoDB refuses ben's feed item once (a throttle, say); everything else goes through.
    let refused = 0;
    const spy = vi.spyOn(client, 'send').mockImplementation(((command: unknown) => {
      if (
        refused === 0 &&
        command instanceof PutCommand &&
        command.input.TableName === tableName('receivers') &&
        command.input.Item?.user_id === ben
      ) {
        refused += 1;
        return Promise.reject(new Error('ProvisionedThroughputExceededException (injected)'));
      }
      return send(command as never);
    }) as typeof client.send);
    try {
      const created = await createNotification(service, body([ann, ben, cy]), id);
      expect(created.status).toBe(202);
    } finally {
      spy.mockRestore();
    }
    expect(refused).toBe(1);
    expect(await receiverCount(ann)).toBe(1);
    expect(await receiverCount(cy)).toBe(1);
    expect(await receiverCount(ben)).toBe(0);

    const queued = await takeQueued();
    expect(queued.map(({ message }) => message)).toEqual([
      { kind: 'chunk', notification_id: id, recipients: [ben], delivery_id: `request:${id}` },
    ]);
    for (const { message, messageId } of queued) await processFanoutMessage(message, handlingOf(messageId));
    expect(await receiverCount(ben)).toBe(1);
    expect(await receiverCount(ann)).toBe(1);
  });

  it('answers within its time budget when a dependency is slow, queueing what it has not settled', async () => {
    const [ann, ben] = users(2) as [string, string];
    const id = unique('n');
    const client = documentClient();
    const send = client.send.bind(client);
    // ben's feed item takes longer to write than the request waits (a throttled partition, say). The budget is
    // shortened from the default (6 s) so the test does not wait it out.
    const budgetMs = 2500;
    const slowMs = budgetMs + 1500;
    let slowWriteDone = false;
    const spy = vi.spyOn(client, 'send').mockImplementation(((command: unknown) => {
      if (command instanceof PutCommand && command.input.Item?.user_id === ben) {
        return new Promise((resolve) => setTimeout(resolve, slowMs))
          .then(() => send(command as never))
          .finally(() => {
            slowWriteDone = true;
          });
      }
      return send(command as never);
    }) as typeof client.send);
    try {
      expect((await createNotification(service, body([ann, ben]), id, budgetMs)).status).toBe(202);
      // It answered at its budget, not once the slow write was done.
      expect(slowWriteDone).toBe(false);
      expect(await receiverCount(ann)).toBe(1);
      const queued = await takeQueued();
      expect(queued.map(({ message }) => message)).toEqual([
        { kind: 'chunk', notification_id: id, recipients: [ben], delivery_id: `request:${id}` },
      ]);
      // The slow write lands meanwhile or the queued chunk writes it: one feed item either way.
      for (const { message, messageId } of queued) await processFanoutMessage(message, handlingOf(messageId));
      await waitUntil(() => slowWriteDone);
    } finally {
      spy.mockRestore();
    }
    expect(await receiverCount(ben)).toBe(1);
  }, 60_000);

  it('hands over the pushes of the recipients it settled before it answers at its budget', async () => {
    const [ann, ben] = users(2) as [string, string];
    const id = unique('n');
    const client = documentClient();
    const send = client.send.bind(client);
    const budgetMs = 2500;
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    // ben's feed item waits until the test lets it go: the request answers first, and the delivery it no longer
    // awaits (frozen with its function, on AWS) cannot be what hands ann's push over.
    const spy = vi.spyOn(client, 'send').mockImplementation(((command: unknown) => {
      if (command instanceof PutCommand && command.input.Item?.user_id === ben) {
        return held.then(() => send(command as never));
      }
      return send(command as never);
    }) as typeof client.send);
    try {
      const answer = await createNotification(
        service,
        body([ann, ben], { channels: ['in_app', 'push'] }),
        id,
        budgetMs,
      );
      expect(answer.status).toBe(202);
      // Handed to the push worker by asynchronous invocation, accepted by Lambda before the answer.
      expect(
        (await queues.takeInvoked()).map(({ functionId, event }) => ({ functionId, event })),
      ).toContainEqual({
        functionId: PUSH_WORKER,
        event: { kind: 'recipients', notification_id: id, recipients: [ann] },
      });
      // ben is queued as a chunk, as in the test before: taken off so that later tests see only their own.
      expect((await takeQueued()).map(({ message }) => message)).toEqual([
        { kind: 'chunk', notification_id: id, recipients: [ben], delivery_id: `request:${id}` },
      ]);
    } finally {
      release();
      spy.mockRestore();
    }
  }, 60_000);

  it('sends a large list as chunks of 100 from the request, keeping the list out of the notification item', async () => {
    const recipients = users(1000);
    const id = unique('n');
    await createNotification(service, body(recipients), id);
    const queued = await takeQueued();
    expect(queued.map(({ message }) => message.kind)).toEqual(Array(10).fill('chunk'));
    expect(
      queued.flatMap(({ message }) => (message.kind === 'chunk' ? message.recipients : [])).sort(),
    ).toEqual([...recipients].sort());
    const { Item } = await documentClient().send(
      new GetCommand({ TableName: tableName('notifications'), Key: { id }, ConsistentRead: true }),
    );
    expect(Item).toMatchObject({ id, status: 'accepted' });
    expect(Item).not.toHaveProperty('recipient_ids');
    // Under 1 KB: one write unit, where the 1,000 ids made it 12.
    expect(Buffer.byteLength(JSON.stringify(Item))).toBeLessThan(1024);
  });
});
