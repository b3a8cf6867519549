import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../../core/clients';
import { ServiceError, unauthorized, validationError } from '../../core/errors';
import { checkChannelAccess } from './channel-access';
import { parseChannel, roomChannel } from './channel-names';
import { MAX_CHANNELS_PER_CONNECTION } from './config';
import {
  type ConnectionRecord,
  connectionStatusOf,
  endGoneConnections,
  getConnection,
  putMembership,
} from './lifecycle';
import { joinRoomPresence, leaveRoomPresence } from './presence';
import { table } from './tables';

export type Authenticated = ConnectionRecord & { readonly user_id: string; readonly session_id: string };

/**
 * Adds a channel to the connection (idempotent). The cap is one conditional write on the connection item, so
 * a burst of concurrent subscribes cannot pass it (each frame's earlier read would be stale), and the item's
 * channel set stays bounded (at most 100 names of at most 518 bytes: far below DynamoDB's 400 KB).
 * The membership row follows the set: a failure between the two leaves a channel the retry completes.
 */
export const subscribe = async (connection: Authenticated, channel: string): Promise<void> => {
  await checkChannelAccess(connection.user_id, channel);
  try {
    await documentClient().send(
      new UpdateCommand({
        TableName: table('connections'),
        Key: { connection_id: connection.connection_id },
        UpdateExpression: 'ADD channels :channel',
        ConditionExpression:
          'attribute_exists(connection_id) AND (attribute_not_exists(channels) OR size(channels) < :max OR contains(channels, :name))',
        ExpressionAttributeValues: {
          ':channel': new Set([channel]),
          ':name': channel,
          ':max': MAX_CHANNELS_PER_CONNECTION,
        },
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    if (!(await getConnection(connection.connection_id)))
      throw unauthorized('The connection has been closed');
    throw new ServiceError(
      'validation',
      `A connection may hold at most ${MAX_CHANNELS_PER_CONNECTION} channels`,
      [{ field: 'channel', issue: 'too many channels' }],
    );
  }
  await putMembership(channel, connection.connection_id, connection.user_id, connection.session_id);
};

/** Removes a channel (idempotent); leaving `room:<id>` also ends the room's presence membership. */
export const unsubscribe = async (connection: Authenticated, channel: string): Promise<void> => {
  const { kind } = parseChannel(channel);
  await documentClient().send(
    new DeleteCommand({
      TableName: table('channels'),
      Key: { channel, connection_id: connection.connection_id },
    }),
  );
  await documentClient().send(
    new UpdateCommand({
      TableName: table('connections'),
      Key: { connection_id: connection.connection_id },
      UpdateExpression: 'DELETE channels :channel, rooms :channel',
      ConditionExpression: 'attribute_exists(connection_id)',
      ExpressionAttributeValues: { ':channel': new Set([channel]) },
    }),
  );
  if (kind === 'room' && connection.rooms?.has(channel)) {
    await endGoneConnections(await leaveRoomPresence(channel, connection.user_id, connection.connection_id));
  }
};

/** `join.room`: subscribes to `room:<id>` and makes the user a presence member of that scope. */
export const joinRoom = async (connection: Authenticated, roomId: string): Promise<string> => {
  const room = roomChannel(roomId);
  await subscribe(connection, room);
  let joined: ConnectionRecord;
  try {
    const result = await documentClient().send(
      new UpdateCommand({
        TableName: table('connections'),
        Key: { connection_id: connection.connection_id },
        UpdateExpression: 'ADD rooms :room',
        // An unsubscribe racing the join may have removed the channel: rooms stay a subset of channels.
        ConditionExpression: 'attribute_exists(connection_id) AND contains(channels, :name)',
        ExpressionAttributeValues: { ':room': new Set([room]), ':name': room },
        // The status as of the room's registration: a `presence.update` handled at the same time either set
        // its status before (read here) or lists this room after (and writes its row).
        ReturnValues: 'ALL_NEW',
      }),
    );
    joined = result.Attributes as ConnectionRecord;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) {
      throw validationError('The room was left while it was being joined', [
        { field: 'room_id', issue: 'left meanwhile' },
      ]);
    }
    throw error;
  }
  const { status, version } = connectionStatusOf(joined);
  await endGoneConnections(
    await joinRoomPresence(room, connection.user_id, connection.connection_id, status, version),
  );
  return room;
};
