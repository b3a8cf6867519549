import { GetCommand } from '@aws-sdk/lib-dynamodb';
import * as envNames from '../../../common/env-names';
import { documentClient } from '../../core/clients';
import { forbidden, notFound, unavailable } from '../../core/errors';
import { logger } from '../../core/logger';
import { parseChannel } from './channel-names';
import { nowSecs, TABLE, table } from './tables';

/** Who may subscribe to which channel; the channel kinds and the name rule live in channel-names.ts. */

/** Whether a topic exists: one GetItem on the events area's `topics` table. */
export const topicExists = async (name: string): Promise<boolean> => {
  if (!process.env[envNames.tableName(TABLE.topics)]) {
    logger.error('the topics table is not wired to this function (lib/wiring/areas/realtime.ts)');
    throw unavailable('Topics are not available yet');
  }
  const result = await documentClient().send(new GetCommand({ TableName: table('topics'), Key: { name } }));
  const item = result.Item as { ttl?: number; deleted_at?: unknown } | undefined;
  return item !== undefined && (item.ttl === undefined || item.ttl > nowSecs());
};

/** Contract §4 channel rules: `user:` only one's own, `room:` anyone, `topic:` an existing topic only. */
export const checkChannelAccess = async (userId: string, channel: string): Promise<void> => {
  const { kind, name } = parseChannel(channel);
  if (kind === 'user' && name !== userId) throw forbidden("Only one's own user channel can be subscribed");
  if (kind === 'topic' && !(await topicExists(name))) throw notFound(`Topic ${name} does not exist`);
};
