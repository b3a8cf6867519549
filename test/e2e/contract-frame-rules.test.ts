/**
 * The WebSocket's rules beyond its frames' schemas (who may use which channel, what a frame before authentication
 * or a second `auth` gets, the bound of a channel name): each is stated in docs/contract.md §4 and in
 * docs/api/asyncapi.json, and the running service answers as stated. The REST rules: contract-rules.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import asyncApi from '../../docs/api/asyncapi.json' with { type: 'json' };
import { repoRoot } from '../../lib/paths';
import { type Frame, TestClient } from '../support/ws-client';
import { realtimeRuntime } from '../support/ws-runtime';

type Realtime = ReturnType<typeof realtimeRuntime>;

interface FrameRule {
  readonly rule: string;
  /** How docs/contract.md states it. */
  readonly contract: RegExp;
  /** How docs/api/asyncapi.json states it (the connection's description, the frames' summaries). */
  readonly asyncApi: RegExp;
  /** The answer to a frame that breaks the rule: an `error` frame with `code`. */
  readonly broken: (realtime: Realtime) => Promise<Frame>;
  readonly code: string;
  /** The answer to the same frame keeping it: an `ack`. */
  readonly kept: (realtime: Realtime) => Promise<Frame>;
}

const realtime = realtimeRuntime();
const user = (name: string) => `${name}-${realtime.run}`;
/** The answer to `frame` on a new connection of `userId`. */
const answer = async (userId: string, frame: Record<string, unknown>): Promise<Frame> =>
  (await realtime.connectAs(userId)).client.request(frame);

const RULES: readonly FrameRule[] = [
  {
    rule: 'a channel name is 1 to 512 bytes in UTF-8',
    contract: /channel name \(after `user:`, `room:`, `topic:`\)[^|]*\| 1–512 bytes/,
    asyncApi: /\*\*Channels\*\* are named `<kind>:<name>`, the name 1 to 512 bytes in UTF-8/,
    broken: () => answer(user('alice'), { type: 'join.room', room_id: 'r'.repeat(513) }),
    code: 'validation',
    kept: () => answer(user('alice'), { type: 'join.room', room_id: 'r'.repeat(512) }),
  },
  {
    rule: 'one’s own user channel only',
    contract: /`user:<id>` only one's own \(error `forbidden`\)/,
    asyncApi: /`user:<user id>`: one's own only \(error `forbidden` otherwise\)/,
    broken: () => answer(user('alice'), { type: 'subscribe', channel: `user:${user('bob')}` }),
    code: 'forbidden',
    kept: () => answer(user('alice'), { type: 'subscribe', channel: `user:${user('alice')}` }),
  },
  {
    rule: 'an existing topic only',
    contract: /`topic:<name>` an existing topic only \(error `not_found`\)/,
    asyncApi: /`topic:<topic name>`: an existing topic only \(error `not_found` otherwise\)/,
    broken: () => answer(user('alice'), { type: 'join.topic', topic: `missing-${realtime.run}` }),
    code: 'not_found',
    kept: async () => {
      const service = await realtime.runtime.mintServiceToken('billing', []);
      const created = await realtime.api('POST', '/topics', service, { name: `frames-${realtime.run}` });
      expect(created.status).toBe(201);
      return answer(user('alice'), { type: 'join.topic', topic: `frames-${realtime.run}` });
    },
  },
  {
    rule: 'frames other than auth and heartbeat wait for authentication',
    contract: /Frames other than `auth` and `heartbeat` before authentication get error `unauthorized`/,
    asyncApi:
      /Frames other than `auth` and `heartbeat` before authentication are answered by error `unauthorized`/,
    broken: async () => {
      const client = await TestClient.open(realtime.runtime.wsUrl);
      try {
        return await client.request({ type: 'subscribe', channel: 'room:lobby' });
      } finally {
        await client.close();
      }
    },
    code: 'unauthorized',
    kept: () => answer(user('alice'), { type: 'subscribe', channel: 'room:lobby' }),
  },
  {
    rule: 'an auth frame holds a user token, and another may follow a refused one',
    contract:
      /in an `auth` frame it gets error `forbidden`, an invalid token error `unauthorized`, and another `auth` may follow within the 10 s/,
    asyncApi:
      /A service token is error `forbidden`, an invalid token error `unauthorized`; another `auth` may follow within the deadline/,
    broken: async () => {
      const client = await TestClient.open(realtime.runtime.wsUrl);
      const refused = await client.request({
        type: 'auth',
        token: await realtime.runtime.mintServiceToken('billing', []),
      });
      // The same connection takes a user token next.
      const accepted = await client.request({
        type: 'auth',
        token: await realtime.runtime.mintUserToken(user('alice')),
      });
      expect(accepted.type).toBe('ack');
      await client.close();
      return refused;
    },
    code: 'forbidden',
    kept: async () => {
      const client = await TestClient.open(realtime.runtime.wsUrl);
      try {
        return await client.request({
          type: 'auth',
          token: await realtime.runtime.mintUserToken(user('alice')),
        });
      } finally {
        await client.close();
      }
    },
  },
  {
    rule: 'a later auth frame renews the token of the same user only',
    contract:
      /A later `auth` on an authenticated connection renews its token: the same user's only \(another user's: error `forbidden`\)/,
    asyncApi:
      /renews the token of an authenticated one before it expires \(same user only; another user's token is error `forbidden`\)/,
    broken: async () =>
      answer(user('alice'), { type: 'auth', token: await realtime.runtime.mintUserToken(user('bob')) }),
    code: 'forbidden',
    kept: async () =>
      answer(user('alice'), { type: 'auth', token: await realtime.runtime.mintUserToken(user('alice')) }),
  },
];

// Line breaks are a layout choice: the contract's words are matched with its white space collapsed.
const contract = readFileSync(join(repoRoot, 'docs/contract.md'), 'utf8').replace(/\s+/g, ' ');
// Descriptions hold JSON-escaped quotes; the rules are matched as a reader sees them.
const asyncApiText = JSON.stringify(asyncApi).replaceAll('\\"', '"');

describe('every WebSocket rule is documented (docs/contract.md §4, asyncapi.json)', () => {
  it.each(RULES.map((rule) => [rule.rule, rule] as const))('%s', (_name, rule) => {
    expect(contract).toMatch(rule.contract);
    expect(asyncApiText).toMatch(rule.asyncApi);
  });
});

describe('the service answers each documented WebSocket rule as documented', () => {
  it.each(RULES.map((rule) => [rule.rule, rule] as const))('%s', { timeout: 60_000 }, async (_name, rule) => {
    const broken = await rule.broken(realtime);
    expect({ type: broken.type, code: broken.code }).toEqual({ type: 'error', code: rule.code });
    expect((await rule.kept(realtime)).type).toBe('ack');
  });
});
