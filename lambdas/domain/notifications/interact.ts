import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { documentClient, tableName } from '../../core/clients';
import { notFound, validationError } from '../../core/errors';
import { newId } from '../../core/ids';
import { logger } from '../../core/logger';
import { HeldByOtherReceive, holdExpiry, type MessageHandling } from '../../core/message-handling';
import { NOTIFY_SOURCE } from '../../core/principal';
import { enqueue } from '../../core/sqs-send';
import { putEvent } from '../events/publish';
import { type FanoutMessage, fanoutQueue } from './fanout-messages';
import { feedState } from './feed';
import { announce, applyTransition, type ItemState, interact, loadReceiver, stateOf } from './item-states';
import type { NotificationRecord, ReceiverRecord } from './model';

/*
 * A click on a feed item or one of its buttons: recorded once (the first click wins) and published once on the
 * bus as `notify.notification.interacted`, so the sender learns which button its user pressed.
 *
 * The event is sent by the fan-out worker, not by the request. The request first queues an `interaction`
 * message naming an id of its own for the click, then records the click with that id by the conditional write
 * of every state change. The worker publishes the event (under that id) only when it finds that id recorded:
 * a losing click's message (a double click, two devices at once) finds another id and publishes nothing, and a
 * crash after the write still has its message queued, so a 200 means the event will be published. Of two
 * receives at once (an SQS copy, a postponed message beside the original) the one that takes the publish lease
 * publishes; only a worker dying between the publish and recording it leaves a repeat, under the same id.
 */

export type InteractionMessage = Extract<FanoutMessage, { kind: 'interaction' }>;

/** Published (source `notify`) for the first click on a feed item. */
const INTERACTED_EVENT = 'notify.notification.interacted';

/** What a click needs of the notification: its buttons, and what the event says about it. */
const notificationOf = async (
  id: string,
): Promise<
  (Pick<NotificationRecord, 'id' | 'event_type' | 'actions'> & Record<string, unknown>) | undefined
> => {
  const read = await documentClient().send(
    new GetCommand({
      TableName: tableName('notifications'),
      Key: { id },
      ProjectionExpression: 'id, event_type, #actions, category',
      ExpressionAttributeNames: { '#actions': 'actions' },
    }),
  );
  return read.Item as
    | (Pick<NotificationRecord, 'id' | 'event_type' | 'actions'> & Record<string, unknown>)
    | undefined;
};

/**
 * POST /notifications/{receiver_id}/interact: the item's states after the click, also sent to the user's
 * connections as a `notification.state` frame with `change: interacted` (again on a repeated click, as every
 * state change does). `actionId` must name one of the notification's buttons (else 400 on `action_id`).
 */
export const interactWithItem = async (
  userId: string,
  receiverId: string,
  actionId: string | undefined,
): Promise<ItemState> => {
  const [receiver, feed] = await Promise.all([loadReceiver(userId, receiverId), feedState(userId)]);
  const notification = await notificationOf(receiver.notification_id);
  if (!notification) throw notFound('No such notification'); // its retention ended first
  if (actionId !== undefined && !(notification.actions ?? []).some((action) => action.id === actionId)) {
    throw validationError('Invalid request body', [
      { field: 'action_id', issue: 'is not the id of one of the notification’s actions' },
    ]);
  }
  let result = { receiver, feed };
  if (receiver.interacted_at === undefined) {
    const interactionId = newId();
    const message: InteractionMessage = {
      kind: 'interaction',
      user_id: userId,
      receiver_id: receiverId,
      interaction_id: interactionId,
      sent_at: new Date().toISOString(),
    };
    await enqueue(fanoutQueue, [message]);
    result = await applyTransition(receiver, feed, interact(actionId ?? null, interactionId));
  }
  const state = stateOf(result.receiver, result.feed);
  await announce(userId, { type: 'notification.state', change: 'interacted', ...state });
  return state;
};

/**
 * The click's event is being published by another receive of this same message (SQS handed it out twice at
 * once). Acknowledging would delete the message that receive depends on if it dies, so this one fails and comes
 * back after the visibility timeout: by then the event is published, or the lease has expired and is taken over.
 */
export class InteractionHeldByOtherReceive extends HeldByOtherReceive {
  constructor(receiverId: string, until: number) {
    super(
      `the click on ${receiverId} is being published by another receive of this message until ${new Date(until).toISOString()}; retried after the visibility timeout`,
    );
    this.name = 'InteractionHeldByOtherReceive';
  }
}

/**
 * Takes the publish lease of the click recorded under `message.interaction_id`, by a conditional write: of two
 * receives at once, one publishes. What a receive that did not take it does instead: `skipped` (published
 * already, another click won, the item is gone, or another message holds the lease: that one is not acknowledged
 * before it publishes, and comes back to take the lease over if its invocation dies), `not-recorded` (no click
 * yet), or an `InteractionHeldByOtherReceive` thrown when another receive of this very message holds it.
 */
const takePublishLease = async (
  message: InteractionMessage,
  handling: MessageHandling,
  receiver: ReceiverRecord | undefined,
): Promise<ReceiverRecord | 'not-recorded' | 'skipped'> => {
  if (!receiver) return 'skipped';
  if (receiver.interaction_id === undefined) return 'not-recorded';
  if (receiver.interaction_id !== message.interaction_id) return 'skipped';
  if (receiver.interaction_published === message.interaction_id) return 'skipped';
  const { interaction_holder: holder, interaction_until: until } = receiver;
  if (until !== undefined && until > Date.now()) {
    if (holder === handling.messageId) throw new InteractionHeldByOtherReceive(receiver.receiver_id, until);
    return 'skipped';
  }
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: tableName('receivers'),
        Key: { user_id: message.user_id, receiver_id: message.receiver_id },
        UpdateExpression: 'SET interaction_holder = :holder, interaction_until = :until',
        ConditionExpression: `interaction_id = :id AND attribute_not_exists(interaction_published) AND ${
          until === undefined ? 'attribute_not_exists(interaction_until)' : 'interaction_until = :expired'
        }`,
        ExpressionAttributeValues: {
          ':holder': handling.messageId,
          ':until': holdExpiry(handling).getTime(),
          ':id': message.interaction_id,
          ...(until === undefined ? {} : { ':expired': until }),
        },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return receiver;
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    // Published, taken by another receive, or the item gone meanwhile: decide again on what is there now.
    const current = error.Item ? (unmarshall(error.Item) as ReceiverRecord) : undefined;
    return takePublishLease(message, handling, current);
  }
};

/**
 * The worker's side: publishes the click's event when the click recorded is this message's and this receive
 * holds the publish lease. `not-recorded`: no click is recorded yet (the request may still be writing it; the
 * caller looks again for as long as it may); `skipped`: published already, another click won, the item is gone,
 * or another message is publishing it.
 */
export const publishInteraction = async (
  message: InteractionMessage,
  handling: MessageHandling,
): Promise<'published' | 'not-recorded' | 'skipped'> => {
  const read = await documentClient().send(
    new GetCommand({
      TableName: tableName('receivers'),
      Key: { user_id: message.user_id, receiver_id: message.receiver_id },
      ConsistentRead: true,
    }),
  );
  const receiver = await takePublishLease(message, handling, read.Item as ReceiverRecord | undefined);
  if (typeof receiver === 'string') return receiver;
  const notification = await notificationOf(receiver.notification_id);
  if (!notification) {
    logger.warn('interaction not published: its notification is gone', {
      receiver_id: receiver.receiver_id,
      notification_id: receiver.notification_id,
    });
    return 'skipped';
  }
  await putEvent(NOTIFY_SOURCE, INTERACTED_EVENT, {
    id: message.interaction_id,
    version: 1,
    priority: 'normal',
    archive: false,
    data: {
      notification_id: receiver.notification_id,
      receiver_id: receiver.receiver_id,
      user_id: receiver.user_id,
      action_id: receiver.interacted_action ?? null,
      event_type: notification.event_type,
      category: notification.category ?? null,
      interacted_at: receiver.interacted_at ?? null,
    },
  });
  await documentClient()
    .send(
      new UpdateCommand({
        TableName: tableName('receivers'),
        Key: { user_id: message.user_id, receiver_id: message.receiver_id },
        UpdateExpression: 'SET interaction_published = :id',
        ConditionExpression: 'interaction_id = :id',
        ExpressionAttributeValues: { ':id': message.interaction_id },
      }),
    )
    .catch((error: Error) => {
      // The item left its feed meanwhile (retention): nothing left to mark, nor to publish again.
      if (error.name !== 'ConditionalCheckFailedException') throw error;
    });
  logger.info('interaction published', {
    receiver_id: receiver.receiver_id,
    interaction_id: message.interaction_id,
  });
  return 'published';
};
