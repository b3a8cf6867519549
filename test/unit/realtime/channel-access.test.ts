import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { envNames } from '../../../common/env';
import { documentClient, tableName } from '../../../lambdas/core/clients';
import { checkChannelAccess } from '../../../lambdas/domain/realtime/channel-access';
import { useDynamoDbLocal } from '../../support/dynamodb';

useDynamoDbLocal();

/** The error a subscribe frame answers with: status, code, message and details, or 'allowed'. */
const outcome = (userId: string, channel: string) =>
  checkChannelAccess(userId, channel).then(
    () => 'allowed',
    (error: { status?: number; code?: string; message?: string; details?: unknown }) => ({
      status: error.status,
      code: error.code,
      message: error.message,
      ...(error.details ? { details: error.details } : {}),
    }),
  );

const putTopic = (name: string, ttl?: number) =>
  documentClient().send(
    new PutCommand({
      TableName: tableName('topics'),
      Item: { name, created_at: new Date().toISOString(), ...(ttl === undefined ? {} : { ttl }) },
    }),
  );

describe('who may subscribe to a channel', () => {
  it("allows one's own user channel and refuses another user's with 403", async () => {
    expect(await outcome('alice', 'user:alice')).toBe('allowed');
    expect(await outcome('alice', 'user:bob')).toEqual({
      status: 403,
      code: 'forbidden',
      message: "Only one's own user channel can be subscribed",
    });
    // A user whose id starts like another's is still someone else.
    expect(await outcome('alice', 'user:alice2')).toMatchObject({ status: 403 });
  });

  it('allows any room to anyone', async () => {
    expect(await outcome('alice', 'room:lobby')).toBe('allowed');
    expect(await outcome('bob', 'room:alice')).toBe('allowed');
  });

  it('allows an existing topic, and answers 404 for a missing or expired one', async () => {
    const run = Date.now();
    await putTopic(`orders-${run}`);
    await putTopic(`later-${run}`, Math.floor(run / 1000) + 3600);
    await putTopic(`gone-${run}`, Math.floor(run / 1000) - 10);
    expect(await outcome('alice', `topic:orders-${run}`)).toBe('allowed');
    expect(await outcome('alice', `topic:later-${run}`)).toBe('allowed');
    for (const name of [`missing-${run}`, `gone-${run}`]) {
      expect(await outcome('alice', `topic:${name}`)).toEqual({
        status: 404,
        code: 'not_found',
        message: `Topic ${name} does not exist`,
      });
    }
  });

  it.each(['lobby', 'group:lobby', 'user:', 'room:two words'])(
    'refuses the channel %j with a validation error naming the field',
    async (channel) => {
      expect(await outcome('alice', channel)).toEqual({
        status: 400,
        code: 'validation',
        message: 'channel must be user:<id>, room:<id> or topic:<name>',
        details: [{ field: 'channel', issue: 'unknown channel shape' }],
      });
    },
  );

  it('answers 503 for a topic when the topics table is not wired to the function', async () => {
    const variable = envNames.tableName('topics');
    const saved = process.env[variable];
    delete process.env[variable];
    try {
      expect(await outcome('alice', 'topic:orders')).toEqual({
        status: 503,
        code: 'unavailable',
        message: 'Topics are not available yet',
      });
      expect(await outcome('alice', 'room:lobby')).toBe('allowed');
    } finally {
      process.env[variable] = saved;
    }
  });
});
