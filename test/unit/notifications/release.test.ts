import { describe, expect, it } from 'vitest';
import { newId } from '../../../lambdas/core/ids';
import { HeldByOtherReceive, type MessageHandling } from '../../../lambdas/core/message-handling';
import { deliverChunk, deliveryByRequest } from '../../../lambdas/domain/notifications/delivery';
import { claimOnce, markSent, stepClaim } from '../../../lambdas/domain/notifications/fallback';
import type { ReleaseMessage } from '../../../lambdas/domain/notifications/holding';
import { readItem } from '../../../lambdas/domain/notifications/item-states';
import { type NotificationRecord, receiverIdFor } from '../../../lambdas/domain/notifications/model';
import { releaseHeld } from '../../../lambdas/domain/notifications/release';
import { putPreferences } from '../../../lambdas/domain/preferences/preferences';
import { PUSH_WORKER } from '../../../lambdas/domain/push/hand-over';
import { type PushMessage, pushQueue } from '../../../lambdas/domain/push/messages';
import { useDynamoDbLocal } from '../../support/dynamodb';
import { notificationRecord } from '../../support/notification-records';
import { handlingOf, throughQueue, useQueuesWithoutWorkers } from '../../support/queues';

/**
 * The release of a held push at the end of a quiet window, as the fan-out worker runs it: sent once per recipient
 * whatever runs it twice, and not at all when the notification expired, the item was read, or push was turned off.
 */
useDynamoDbLocal();
const queues = useQueuesWithoutWorkers();

let seq = 0;
const newUser = () => `released-${Date.now()}-${++seq}`;

const notification = (overrides: Partial<NotificationRecord> = {}): NotificationRecord =>
  notificationRecord({ push: { when: 'always', collapse_key: null, silent: false }, ...overrides });

const releaseOf = (record: NotificationRecord, userId: string): ReleaseMessage => ({
  kind: 'release',
  notification_id: record.id,
  user_id: userId,
  until: new Date().toISOString(),
  channels: ['push'],
});

/** The feed item, written by delivery itself (in_app alone: no push yet), and read by the user when `read`. */
const writeReceiver = async (record: NotificationRecord, userId: string, read = false) => {
  await deliverChunk({ ...record, channels: ['in_app'] }, [userId], deliveryByRequest(record.id));
  if (read) await readItem(userId, receiverIdFor(record.id, userId, record.deliver_at));
};

/** The recipients of every push handed to the push worker (by asynchronous invocation) since the last call. */
const pushesQueued = async (): Promise<string[]> =>
  (await queues.takeInvoked()).flatMap(({ functionId, event }) => {
    expect(functionId).toBe(PUSH_WORKER);
    const push = throughQueue(pushQueue, event as PushMessage);
    return push.kind === 'recipients' ? [...push.recipients] : [];
  });

describe('release of held pushes', () => {
  it('hands the push over once: a second release message of the same recipient sends nothing', async () => {
    const user = newUser();
    const record = notification();
    await writeReceiver(record, user);
    await pushesQueued();
    const message = releaseOf(record, user);
    expect(await releaseHeld(record, message, handlingOf('release-1'))).toBe('released');
    expect(await releaseHeld(record, message, handlingOf('release-2'))).toBe('skipped');
    expect(await pushesQueued()).toEqual([user]);
    // The first message redelivered once it was sent (its acknowledgement lost) sends nothing again.
    expect(await releaseHeld(record, message, handlingOf('release-1'))).toBe('skipped');
    expect(await pushesQueued()).toEqual([]);
  });

  it('sends nothing for an expired notification, a read item, or a recipient who turned push off', async () => {
    await pushesQueued();
    const [expiredUser, readUser, offUser, noFeedUser] = [newUser(), newUser(), newUser(), newUser()];
    const expired = notification({ expires_at: new Date(Date.now() - 1000).toISOString() });
    expect(await releaseHeld(expired, releaseOf(expired, expiredUser), handlingOf(newId()))).toBe('expired');

    const read = notification();
    await writeReceiver(read, readUser, true);
    expect(await releaseHeld(read, releaseOf(read, readUser), handlingOf(newId()))).toBe('skipped');

    const turnedOff = notification();
    await writeReceiver(turnedOff, offUser);
    await putPreferences(offUser, {
      rules: [{ event_type: 'social.*', channels: { push: false } }],
      muted_topics: [],
      digests: [],
      time_zone: null,
      quiet_hours: null,
    });
    expect(await releaseHeld(turnedOff, releaseOf(turnedOff, offUser), handlingOf(newId()))).toBe('skipped');
    expect(await pushesQueued()).toEqual([]);

    // No feed item (in_app off): nothing shows it was read, so the push goes.
    const pushOnly = notification({ channels: ['push'] });
    expect(await releaseHeld(pushOnly, releaseOf(pushOnly, noFeedUser), handlingOf(newId()))).toBe(
      'released',
    );
    expect(await pushesQueued()).toEqual([noFeedUser]);
  });
});

describe('the claim of what goes to one recipient once (a toast step, a release)', () => {
  /** A handling of `messageId`: its receive, and a deadline `ms` from now (past, for an invocation that died). */
  const handling = (messageId: string, receive: string, ms = 30_000): MessageHandling => ({
    messageId,
    receive,
    deadline: new Date(Date.now() + ms),
    redeliveredBy: 'queue',
  });

  it('lets one of two copies of a message handled at once send; the other comes back later', async () => {
    const [user, id] = [newUser(), newId()];
    const claims = await Promise.allSettled([
      claimOnce(id, stepClaim(0), user, handling('step-message', '1')),
      claimOnce(id, stepClaim(0), user, handling('step-message', '2')),
    ]);
    expect(claims.filter((claim) => claim.status === 'fulfilled' && claim.value === true)).toHaveLength(1);
    const refused = claims.find((claim) => claim.status === 'rejected');
    expect(refused?.status === 'rejected' && refused.reason).toBeInstanceOf(HeldByOtherReceive);
  });

  it('sends again when redelivered after its invocation died before it was sent, not once it was sent', async () => {
    const [user, id] = [newUser(), newId()];
    // Its invocation's deadline (with the clocks' slack) has passed: it died after the claim.
    expect(await claimOnce(id, 'release', user, handling('release-message', '1', -60_000))).toBe(true);
    expect(await claimOnce(id, 'release', user, handling('release-message', '2'))).toBe(true);
    await markSent(id, 'release', user);
    expect(await claimOnce(id, 'release', user, handling('release-message', '3'))).toBe(false);
    // Another message for the same recipient and step never sends it.
    expect(await claimOnce(id, 'release', user, handling('another-message', '1', -60_000))).toBe(false);
  });
});
