import { describe, expect, it } from 'vitest';
import { tableName } from '../../../lambdas/core/clients';
import type { Principal } from '../../../lambdas/core/principal';
import { parseOrThrow } from '../../../lambdas/core/validation';
import { createNotification } from '../../../lambdas/domain/notifications/create';
import { processFanoutMessage } from '../../../lambdas/domain/notifications/fanout';
import { fanoutQueue } from '../../../lambdas/domain/notifications/fanout-messages';
import { createNotificationSchema } from '../../../lambdas/domain/notifications/schema';
import { putDefaults } from '../../../lambdas/domain/preferences/preferences';
import { putDefaultsSchema } from '../../../lambdas/domain/preferences/schema';
import { digestRecords } from '../../support/digest-records';
import { useDynamoDbLocal, useDynamoDbOutage } from '../../support/dynamodb';
import { handlingOf, useQueuesWithoutWorkers } from '../../support/queues';

/**
 * A recipient who joins a digest gets no feed item and no frame now, so its delivery reads neither its read-all
 * watermark nor its connections: only its preferences and the batch (docs/digests.md, "Requests per operation").
 */
useDynamoDbLocal();
const store = useDynamoDbOutage();
const queues = useQueuesWithoutWorkers();

const service: Principal = { kind: 'service', id: 'forum', scopes: ['notifications:write'], expiresAt: 0 };
let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now()}-${++seq}`;

/** The tables each DynamoDB call names, while `work` runs. */
const tablesTouched = async (work: () => Promise<unknown>): Promise<Set<string>> => {
  const tables = new Set<string>();
  store.interpose(async (_operation, request) => {
    if (typeof request.TableName === 'string') tables.add(request.TableName);
    for (const table of Object.keys((request.RequestItems as object | undefined) ?? {})) tables.add(table);
  });
  await work();
  return tables;
};

/**
 * Runs the fan-out worker on every chunk queued now. A digest's close (a message delayed by its 1 s window) taken
 * with them is dropped: it delivers the digest, which reads what any delivery reads.
 */
const runChunks = async (): Promise<number> => {
  let chunks = 0;
  for (;;) {
    const taken = await queues.take(fanoutQueue);
    if (taken.length === 0) return chunks;
    for (const { message, messageId } of taken) {
      if (message.kind !== 'chunk') continue;
      chunks++;
      await processFanoutMessage(message, handlingOf(messageId));
    }
  }
};

const notification = (recipients: readonly string[], fields: Record<string, unknown> = {}) =>
  parseOrThrow(createNotificationSchema, {
    event_type: 'comment.created',
    title: 'Ann commented',
    recipient_ids: recipients,
    channels: ['in_app', 'toast'],
    ...fields,
  });

const joinedEveryone = async (recipients: readonly string[]) => {
  for (const userId of recipients) expect(await digestRecords(userId, 'joined#')).toHaveLength(1);
};

describe('what a digest member reads', () => {
  it('in the accepting request: no read-all watermark, no connections', async () => {
    const recipients = [unique('member'), unique('member')];
    const body = notification(recipients, { digest: { key: 'post-1', window_secs: 1 } });
    const tables = await tablesTouched(() => createNotification(service, body, unique('n')));
    await joinedEveryone(recipients);
    expect(tables).toContain(tableName('digests'));
    expect(tables).not.toContain(tableName('feedState'));
    expect(tables).not.toContain(tableName('wsChannels'));
  });

  it('in a fan-out chunk: no read-all watermark, no connections', async () => {
    const recipients = Array.from({ length: 12 }, () => unique('member'));
    const body = notification(recipients, { digest: { key: 'post-2', window_secs: 1 } });
    await createNotification(service, body, unique('n'));
    let chunks = 0;
    const tables = await tablesTouched(async () => {
      chunks = await runChunks();
    });
    expect(chunks).toBeGreaterThan(0);
    await joinedEveryone(recipients);
    expect(tables).not.toContain(tableName('feedState'));
    expect(tables).not.toContain(tableName('wsChannels'));
  });

  it('batched by the service defaults, in a fan-out chunk: no read-all watermark, no connections', async () => {
    const eventType = unique('digest.defaults').replaceAll('-', '.');
    await putDefaults(
      parseOrThrow(putDefaultsSchema, {
        rules: [{ event_type: eventType, digest: { window_secs: 1 } }],
      }),
    );
    try {
      const recipients = Array.from({ length: 12 }, () => unique('member'));
      await createNotification(service, notification(recipients, { event_type: eventType }), unique('n'));
      const tables = await tablesTouched(runChunks);
      await joinedEveryone(recipients);
      expect(tables).not.toContain(tableName('feedState'));
      expect(tables).not.toContain(tableName('wsChannels'));
    } finally {
      await putDefaults(parseOrThrow(putDefaultsSchema, { rules: [] }));
    }
  });

  it('a notification without a digest still reads the watermark and the connections it delivers by', async () => {
    const recipients = [unique('reader')];
    const tables = await tablesTouched(() =>
      createNotification(service, notification(recipients), unique('n')),
    );
    expect(tables).toContain(tableName('feedState'));
    expect(tables).toContain(tableName('wsChannels'));
  });
});
