import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { batchGetAll } from '../../core/batch-get';
import { documentClient, tableName } from '../../core/clients';
import { forEachLimited } from '../../core/concurrency';
import { notFound, ServiceError } from '../../core/errors';
import type * as z from '../../core/zod';
import { userChannel } from '../realtime/channel-names';
import { deliverToChannel } from '../realtime/deliver';
import type { NotificationBulkFrame, NotificationStateFrame } from '../realtime/frames';
import { endGoneConnections } from '../realtime/lifecycle';
import { type FeedState, feedState, keepUnreadAboveWatermark, readAtOf, unreadKeyAbove } from './feed';
import { isExpired, isReceiverId, type ReceiverRecord } from './model';
import type { itemStateSchema } from './responses';

/*
 * The states of one feed item besides its read state's watermark (feed.ts): seen, read, archived, snoozed.
 * Every change is one conditional UpdateItem on the receiver, conditional on the states it was computed from
 * (a concurrent change makes it start over from what is there), and idempotent: an item already in the state
 * is left as it is and answers its states.
 *
 * The unread count is one Query on the `unread` index, which holds the items carrying `unread_key`. Only items
 * of the default feed carry it: archiving or snoozing an unread item moves its key to `hidden_unread_key`
 * (a read one keeps its `read_at`, written out when a read-all's watermark read it), so the count is exactly
 * the unread items the default feed lists, and unarchiving puts the key back above the read-all watermark.
 */

export type ItemState = z.output<typeof itemStateSchema>;
export type StateChange = NotificationStateFrame['change'];

/** A change to one receiver: attributes to set and to remove. */
interface Update {
  readonly set: Readonly<Record<string, string>>;
  readonly remove: readonly string[];
}

/** The update a change makes to a receiver in its present states, or undefined when it is in that state already. */
export type Transition = (receiver: ReceiverRecord, feed: FeedState, now: string) => Update | undefined;

/** The attributes a transition reads: its update is conditional on them unchanged. */
const GUARDED = [
  'unread_key',
  'hidden_unread_key',
  'read_at',
  'seen_at',
  'archived_at',
  'snoozed_until',
  'interacted_at',
] as const satisfies readonly (keyof ReceiverRecord)[];

const isHidden = (receiver: ReceiverRecord): boolean =>
  receiver.archived_at !== undefined || receiver.snoozed_until !== undefined;

/** Out of the default feed: its unread key leaves the `unread` index (kept aside), or its read time is written out. */
const hide = (receiver: ReceiverRecord, feed: FeedState): Update => {
  if (isHidden(receiver)) return { set: {}, remove: [] };
  const readAt = readAtOf(receiver, feed);
  if (readAt) return { set: receiver.read_at ? {} : { read_at: readAt }, remove: ['unread_key'] };
  return {
    set: receiver.unread_key ? { hidden_unread_key: receiver.unread_key } : {},
    remove: ['unread_key'],
  };
};

export const markSeen: Transition = (receiver, _feed, now) =>
  receiver.seen_at ? undefined : { set: { seen_at: now }, remove: [] };

export const markRead: Transition = (receiver, feed, now) =>
  readAtOf(receiver, feed)
    ? undefined
    : { set: { read_at: now }, remove: ['unread_key', 'hidden_unread_key'] };

/**
 * A click on the item (`action` null) or one of its buttons: the first is recorded, under the id its request
 * chose (the bus event's), and later ones change nothing. A click also marks the item seen and read (read as
 * `markRead` does, so the unread count follows).
 */
export const interact =
  (action: string | null, interactionId: string): Transition =>
  (receiver, feed, now) => {
    if (receiver.interacted_at) return undefined;
    const read = markRead(receiver, feed, now);
    return {
      set: {
        ...(receiver.seen_at ? {} : { seen_at: now }),
        ...read?.set,
        interacted_at: now,
        interaction_id: interactionId,
        ...(action === null ? {} : { interacted_action: action }),
      },
      remove: read?.remove ?? [],
    };
  };

/** Archiving a snoozed item ends its snooze: its wake-up would otherwise bring it back out of the archive. */
export const archive: Transition = (receiver, feed, now) => {
  // Archived already and snoozed since: archiving ends the snooze, as it ends any (the first archived_at stays).
  if (receiver.archived_at)
    return receiver.snoozed_until ? { set: {}, remove: ['snoozed_until'] } : undefined;
  const hidden = hide(receiver, feed);
  const remove = receiver.snoozed_until ? [...hidden.remove, 'snoozed_until' as const] : hidden.remove;
  return { set: { ...hidden.set, archived_at: now }, remove };
};

/**
 * The unread key of an item coming back to the default feed unread (unarchived, woken up): a new one, of now and
 * above the read-all watermark, as a late arrival gets. Not its old key: a read-all that read the newest key
 * before the item came back, and moves the watermark there after, would cover an old key and read the item
 * unseen (read-all reads the default feed only).
 */
const backUnreadKey = (receiver: ReceiverRecord, feed: FeedState): string =>
  unreadKeyAbove(receiver.notification_id, receiver.user_id, feed.read_all_watermark);

const unarchive: Transition = (receiver, feed, now): Update | undefined => {
  if (!receiver.archived_at) return undefined;
  // Still snoozed: only the archive mark goes, and the item stays out of the default feed.
  if (receiver.snoozed_until) return { set: {}, remove: ['archived_at'] };
  // Read: back as read.
  if (!receiver.hidden_unread_key) return { set: { returned_at: now }, remove: ['archived_at'] };
  return {
    set: { unread_key: backUnreadKey(receiver, feed), returned_at: now },
    remove: ['archived_at', 'hidden_unread_key'],
  };
};

export const snoozeUntil =
  (until: string): Transition =>
  (receiver, feed) => {
    if (receiver.snoozed_until === until) return undefined;
    const hidden = hide(receiver, feed);
    return { set: { ...hidden.set, snoozed_until: until }, remove: hidden.remove };
  };

/** Awake: back in the default feed (also out of the archive), unread and unseen, as new (as `unarchive` says). */
const wakeFrom =
  (until: string): Transition =>
  (receiver, feed, now) => {
    if (receiver.snoozed_until !== until) return undefined;
    return {
      set: { unread_key: backUnreadKey(receiver, feed), woken_from: until, returned_at: now },
      remove: ['snoozed_until', 'archived_at', 'read_at', 'seen_at', 'hidden_unread_key'],
    };
  };

export const stateOf = (receiver: ReceiverRecord, feed: FeedState): ItemState => ({
  id: receiver.receiver_id,
  seen_at: receiver.seen_at ?? null,
  read_at: readAtOf(receiver, feed),
  archived_at: receiver.archived_at ?? null,
  snoozed_until: receiver.snoozed_until ?? null,
  interacted_at: receiver.interacted_at ?? null,
  interacted_action: receiver.interacted_action ?? null,
  revision: receiver.revision ?? 0,
});

const receiverKey = (userId: string, receiverId: string) => ({ user_id: userId, receiver_id: receiverId });

/** The user's receiver, unexpired (strongly consistent: a change is computed from it); else 404. */
export const loadReceiver = async (userId: string, receiverId: string): Promise<ReceiverRecord> => {
  if (!isReceiverId(receiverId)) throw notFound('No such notification');
  const result = await documentClient().send(
    new GetCommand({
      TableName: tableName('receivers'),
      Key: receiverKey(userId, receiverId),
      ConsistentRead: true,
    }),
  );
  const receiver = result.Item as ReceiverRecord | undefined;
  if (!receiver || isExpired(receiver.expires_at)) throw notFound('No such notification');
  return receiver;
};

/**
 * Applies `transition` to a receiver read before: one conditional UpdateItem, started over from the item as it
 * is now when it changed meanwhile. `changed` is false when it was in that state already. A receiver removed
 * meanwhile (its retention) is a 404. The write adds 1 to the item's `revision`, so the revision orders the
 * item's states as written.
 */
export const applyTransition = async (
  receiver: ReceiverRecord,
  feed: FeedState,
  transition: Transition,
): Promise<{ receiver: ReceiverRecord; feed: FeedState; changed: boolean }> => {
  let current = receiver;
  let state = feed;
  for (;;) {
    const update = transition(current, state, new Date().toISOString());
    if (!update) return { receiver: current, feed: state, changed: false };
    const names: Record<string, string> = { '#revision': 'revision' };
    const values: Record<string, string | number> = { ':one': 1 };
    const guards = GUARDED.map((field) => {
      names[`#${field}`] = field;
      const was = current[field];
      if (was === undefined) return `attribute_not_exists(#${field})`;
      values[`:was_${field}`] = was;
      return `#${field} = :was_${field}`;
    });
    const sets = Object.entries(update.set).map(([field, value]) => {
      names[`#${field}`] = field;
      values[`:set_${field}`] = value;
      return `#${field} = :set_${field}`;
    });
    const removes = update.remove.map((field) => {
      names[`#${field}`] = field;
      return `#${field}`;
    });
    try {
      const result = await documentClient().send(
        new UpdateCommand({
          TableName: tableName('receivers'),
          Key: receiverKey(current.user_id, current.receiver_id),
          UpdateExpression: [
            sets.length > 0 ? `SET ${sets.join(', ')}` : '',
            removes.length > 0 ? `REMOVE ${removes.join(', ')}` : '',
            'ADD #revision :one',
          ].join(' '),
          ConditionExpression: ['attribute_exists(receiver_id)', ...guards].join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      const written = result.Attributes as ReceiverRecord;
      if (update.set.unread_key) {
        await keepUnreadAboveWatermark(
          written.user_id,
          written.receiver_id,
          written.notification_id,
          update.set.unread_key,
        );
      }
      return { receiver: written, feed: state, changed: true };
    } catch (error) {
      if (!(error instanceof ConditionalCheckFailedException)) throw error;
      if (!error.Item) throw notFound('No such notification');
      // Changed meanwhile (another device, a read-all moving the watermark): decide again on what is there.
      current = unmarshall(error.Item) as ReceiverRecord;
      state = await feedState(current.user_id);
    }
  }
};

/** Sends a state change to the user's connections (and the replay buffers of its sessions away). */
export const announce = async (
  userId: string,
  frame: NotificationStateFrame | NotificationBulkFrame,
): Promise<void> => {
  const sent = await deliverToChannel(userChannel(userId), frame);
  await endGoneConnections(sent.gone);
};

/**
 * One change of one item, as the routes make it: the item's states after it, also sent to the user's
 * connections — even when it was in that state already, so a retry after a failure before the frame still
 * reaches the other devices (the frame carries states, so a repeat is harmless).
 */
const changeItem = async (
  userId: string,
  receiverId: string,
  change: StateChange,
  transition: Transition,
): Promise<ItemState> => {
  const [receiver, feed] = await Promise.all([loadReceiver(userId, receiverId), feedState(userId)]);
  const result = await applyTransition(receiver, feed, transition);
  const state = stateOf(result.receiver, result.feed);
  await announce(userId, { type: 'notification.state', change, ...state });
  return state;
};

/** POST /notifications/{receiver_id}/read: the first `read_at` stays (also a read-all's). */
export const readItem = async (
  userId: string,
  receiverId: string,
): Promise<{ id: string; read_at: string }> => {
  const state = await changeItem(userId, receiverId, 'read', markRead);
  return { id: state.id, read_at: state.read_at as string };
};

/** POST /notifications/{receiver_id}/archive. */
export const archiveItem = (userId: string, receiverId: string): Promise<ItemState> =>
  changeItem(userId, receiverId, 'archived', archive);

/** POST /notifications/{receiver_id}/unarchive. */
export const unarchiveItem = (userId: string, receiverId: string): Promise<ItemState> =>
  changeItem(userId, receiverId, 'unarchived', unarchive);

/**
 * How long after a request started it may still write: the state-change routes' Lambda timeout (10 s, the
 * wiring's default) and slack. A snooze until a time is requested before that time, so its write has landed
 * this long after it, if ever.
 */
export const STATE_CHANGE_LONGEST_MS = 15_000;

/**
 * The wake-up of a snoozed item (a `wake` message on `fanout`, from its schedule): unread, unseen and back in
 * the default feed, announced by a `woken` frame. `not-snoozed`: the item is not snoozed until then (snoozed
 * again to another time, archived, or its snooze's write not landed yet: the caller decides whether to look
 * again); `skipped`: gone. A redelivered message whose wake-up was done sends the frame again (it may have
 * failed before it).
 */
export const wakeItem = async (
  userId: string,
  receiverId: string,
  until: string,
): Promise<'woken' | 'not-snoozed' | 'skipped'> => {
  const [read, feed] = await Promise.all([
    documentClient().send(
      new GetCommand({
        TableName: tableName('receivers'),
        Key: receiverKey(userId, receiverId),
        ConsistentRead: true,
      }),
    ),
    feedState(userId),
  ]);
  const receiver = read.Item as ReceiverRecord | undefined;
  if (!receiver || isExpired(receiver.expires_at)) return 'skipped';
  if (receiver.snoozed_until !== until && receiver.woken_from !== until) return 'not-snoozed';
  let result: Awaited<ReturnType<typeof applyTransition>>;
  try {
    result = await applyTransition(receiver, feed, wakeFrom(until));
  } catch (error) {
    if (error instanceof ServiceError && error.code === 'not_found') return 'skipped'; // removed (its retention)
    throw error;
  }
  if (result.receiver.snoozed_until !== undefined) return 'not-snoozed'; // snoozed again, until another time
  await announce(userId, {
    type: 'notification.state',
    change: 'woken',
    ...stateOf(result.receiver, result.feed),
  });
  return 'woken';
};

/** Receivers changed at once by one call. */
const CHANGE_CONCURRENCY = 20;

/**
 * POST /notifications/seen: the items an app showed, in one call. Every id must be the user's and unexpired
 * (else 404 and nothing is marked); one `notification.bulk` frame names them.
 */
export const markItemsSeen = async (userId: string, receiverIds: readonly string[]): Promise<ItemState[]> => {
  if (!receiverIds.every(isReceiverId)) throw notFound('No such notification');
  const [found, feed] = await Promise.all([
    batchGetAll(
      tableName('receivers'),
      receiverIds.map((receiverId) => receiverKey(userId, receiverId)),
      { consistent: true },
    ),
    feedState(userId),
  ]);
  const byId = new Map(
    (found as unknown as ReceiverRecord[])
      .filter((receiver) => !isExpired(receiver.expires_at))
      .map((receiver) => [receiver.receiver_id, receiver]),
  );
  const receivers = receiverIds.map((receiverId) => byId.get(receiverId));
  if (receivers.some((receiver) => receiver === undefined)) throw notFound('No such notification');
  const states = new Map<string, ItemState>();
  let updated = 0;
  await forEachLimited(receivers as ReceiverRecord[], CHANGE_CONCURRENCY, async (receiver) => {
    const result = await applyTransition(receiver, feed, markSeen);
    if (result.changed) updated += 1;
    states.set(receiver.receiver_id, stateOf(result.receiver, result.feed));
  });
  await announce(userId, {
    type: 'notification.bulk',
    change: 'seen',
    ids: [...receiverIds],
    before: null,
    category: null,
    at: new Date().toISOString(),
    updated,
  });
  return receiverIds.map((receiverId) => states.get(receiverId) as ItemState);
};
