/**
 * Ending a test client's connection the way AWS ends it: API Gateway sends `$disconnect` on a best-effort basis
 * (the local runtime's AWS-like delivery drops some, local/delivery.ts), and the sweeper cleans up after a
 * connection whose `$disconnect` never came, once the connection is due and GetConnection answers 410.
 */
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../../lambdas/core/clients';
import { membersPage } from '../../lambdas/domain/realtime/deliver';
import { getConnection } from '../../lambdas/domain/realtime/lifecycle';
import { sweep } from '../../lambdas/domain/realtime/sweeper';
import { table } from '../../lambdas/domain/realtime/tables';
import type { TestClient } from './ws-client';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long `$disconnect` gets to clean up before the test runs the sweep AWS would run within the minute. */
const DISCONNECT_GRACE_MS = 1500;
/**
 * How long a `$disconnect` already under way when the sweep ran gets to finish: a ceiling, not a wait (the
 * loop ends as soon as the clean-up is through), generous for a loaded machine.
 */
const FINISHING_CEILING_MS = 15_000;

/** The id of a user's connection in a session (the `session` frame does not carry it): its user channel row. */
export const connectionIdOf = async (userId: string, sessionId: string): Promise<string> => {
  const { members } = await membersPage(`user:${userId}`);
  // A session's earlier connections may still be listed, detached.
  const member = members.find((candidate) => candidate.session_id === sessionId && !candidate.detached);
  if (!member) throw new Error(`no connection of ${userId} in session ${sessionId}`);
  return member.connection_id;
};

export interface CloseOptions {
  readonly userId: string;
  readonly sessionId: string;
  /** Drop the TCP connection without a close handshake (a network loss) instead of closing it. */
  readonly drop?: boolean;
  /** Clients that must survive the sweep: they heartbeat first, so it does not close them as idle. */
  readonly keepAlive?: readonly TestClient[];
}

/** A connection as it was before it ended: its id and the channels it was a member of. */
export interface EndingConnection {
  readonly id: string;
  readonly channels: readonly string[];
}

/** Reads what a connection is a member of, before the test ends it. */
export const endingConnection = async (connectionId: string): Promise<EndingConnection> => {
  const record = await getConnection(connectionId);
  return { id: connectionId, channels: [...(record?.channels ?? [])] };
};

/** Whether the clean-up after a connection is through: its record gone and its memberships detached. */
const cleanedUp = async (connection: EndingConnection): Promise<boolean> => {
  if (await getConnection(connection.id)) return false;
  for (const channel of connection.channels) {
    const { Item } = await documentClient().send(
      new GetCommand({
        TableName: table('channels'),
        Key: { channel, connection_id: connection.id },
        ConsistentRead: true,
      }),
    );
    if (Item && Item.detached !== true) return false;
  }
  return true;
};

/**
 * Waits until the service has cleaned up after connections that ended (record gone, memberships detached):
 * by `$disconnect`, or, for one it did not reach, by the sweep. The sweep only looks at connections whose
 * `check_at` has passed; the test makes these due at once, standing in for the minutes they would wait on AWS.
 * `keepAlive` clients heartbeat first, so the sweep does not close them as idle.
 */
export const awaitCleanUp = async (
  connections: readonly EndingConnection[],
  keepAlive: readonly TestClient[] = [],
): Promise<void> => {
  const remaining = async () => {
    const left: EndingConnection[] = [];
    for (const connection of connections) if (!(await cleanedUp(connection))) left.push(connection);
    return left;
  };
  const graceEnd = Date.now() + DISCONNECT_GRACE_MS;
  let left = await remaining();
  while (left.length > 0 && Date.now() < graceEnd) {
    await sleep(50);
    left = await remaining();
  }
  if (left.length === 0) return;
  for (const other of keepAlive) {
    // API Gateway answers it (a MOCK route): the ack carries no id.
    other.send({ type: 'heartbeat' });
    await other.nextOfType('heartbeat.ack');
  }
  for (const { id } of left) {
    await documentClient()
      .send(
        new UpdateCommand({
          TableName: table('connections'),
          Key: { connection_id: id },
          UpdateExpression: 'SET check_at = :due',
          ConditionExpression: 'attribute_exists(connection_id)',
          ExpressionAttributeValues: { ':due': 0 },
        }),
      )
      .catch((error: Error) => {
        // $disconnect got there after all.
        if (error.name !== 'ConditionalCheckFailedException') throw error;
      });
  }
  await sweep();
  // A $disconnect that started before the sweep may still be finishing its clean-up.
  const deadline = Date.now() + FINISHING_CEILING_MS;
  left = await remaining();
  while (left.length > 0 && Date.now() < deadline) {
    await sleep(50);
    left = await remaining();
  }
  if (left.length > 0)
    throw new Error(`connections ${left.map(({ id }) => id).join(', ')} were not cleaned up`);
};

/** Ends a client's connection (closes it, or drops it) and waits until the service has cleaned up after it. */
export const endAndCleanUp = async (client: TestClient, options: CloseOptions): Promise<void> => {
  const connection = await endingConnection(await connectionIdOf(options.userId, options.sessionId));
  if (options.drop) client.socket.terminate();
  else await client.close();
  await awaitCleanUp([connection], options.keepAlive);
};

/** The open connections of a user, read from its `user:<id>` channel. */
export const connectionIds = async (userId: string): Promise<string[]> => {
  const { members } = await membersPage(`user:${userId}`);
  return members.filter((member) => !member.detached).map((member) => member.connection_id);
};

/** Every open connection of a user (e.g. of a browser page the test is about to close), as it is now. */
export const connectionsOf = async (userId: string): Promise<EndingConnection[]> =>
  Promise.all((await connectionIds(userId)).map(endingConnection));
