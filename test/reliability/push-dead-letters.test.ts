import { describe, expect, it, vi } from 'vitest';
import { tokenHashOf } from '../../lambdas/domain/devices/devices';
import type { PushMessage } from '../../lambdas/domain/push/messages';
import { newSeed } from '../../local/delivery';
import { apiClient, eventually } from '../support/api';
import { usePushRuntime } from '../support/push-runtime';
import { queueIdle } from '../support/queues';
import { copiesOnQueue } from '../support/reliability';

/**
 * One dead letter in `push-dlq` per push given up on, when SQS hands the message of its last attempt to two
 * consumers at once (every other receive of `push` gets a copy here). Both copies carry the same message id, so the
 * one that finds the failure recorded by the other may queue what follows from it too, while the other does: of the
 * dead letters so queued, the push record names the one that stands (docs/push-delivery.md, "Exactly once").
 */
const COPY_ODDS = 0.5;
/** Recipients given up on side by side: each push's last attempt is a chance for its copies to meet. */
const RECIPIENTS = 16;

const seed = Number(process.env.RELIABILITY_SEED ?? newSeed());
// A dead letter reaches the DLQ after 5 receives, each a visibility timeout (180 s) apart: 9 s here.
const push = usePushRuntime({ timeScale: '0.01', delivery: copiesOnQueue(seed, 'push', COPY_ODDS) });
const api = apiClient(() => push.runtime.httpUrl);

vi.setConfig({ testTimeout: 180_000 });

describe('pushes given up on while copies of their messages run at once', () => {
  it('each leaves one dead letter in push-dlq', async () => {
    const { runtime, expo } = push;
    const users = await Promise.all(
      Array.from({ length: RECIPIENTS }, async (_, index) => {
        const id = `given-up${index}-${process.pid}-${push.run}`;
        const token = await runtime.mintUserToken(id);
        const pushToken = `ExponentPushToken[${id}]`;
        expect((await api('POST', '/devices', token, { token: pushToken, platform: 'ios' })).status).toBe(
          201,
        );
        return { id, tokenHash: tokenHashOf(pushToken) };
      }),
    );
    // Every attempt of every push answered 503: each is given up on after its fifth.
    expo.failNext({ status: 503 }, 5 * RECIPIENTS);
    const service = await runtime.mintServiceToken('billing', ['notifications:write']);
    const created = await api('POST', '/notifications', service, {
      event_type: 'billing.invoice_ready',
      title: 'Invoice ready',
      recipient_ids: users.map((user) => user.id),
      channels: ['push'],
    });
    expect(created.status).toBe(202);
    const id = created.body.id as string;
    const records = await eventually(
      async () => (await api('GET', `/sent-notifications/${id}/pushes`, service)).body.items,
      (items: { status: string; attempts: number }[]) =>
        items.length === RECIPIENTS && items.every((item) => item.status === 'failed'),
      120_000,
    );
    expect(records.map((record) => record.attempts)).toEqual(users.map(() => 5));
    // Every dead letter has left the push queue (into the DLQ), and no copy of an event waits or runs.
    await eventually(
      async () => (await queueIdle('push')) && runtime.standIns.lambda.asyncBacklog() === 0,
      Boolean,
      60_000,
    );
    // A dead letter per push; a copy's message may also end there (every copy that found the push held by the
    // other failed, and counts as a receive), but no second letter of one push.
    const tokenHashes = runtime.standIns.sqs
      .declaredQueue('push-dlq')
      .snapshot()
      .map((message) => JSON.parse(message.body) as PushMessage)
      .flatMap((message) => (message.kind === 'dead-letter' ? [message.token_hash] : []))
      .sort();
    expect(tokenHashes, `seed ${seed}`).toEqual(users.map((user) => user.tokenHash).sort());
  });
});
