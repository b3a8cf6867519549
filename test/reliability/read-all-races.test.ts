/**
 * Reliability suite, read state under races: read-all marks what is in the feed when it runs and nothing that
 * arrives later, and the unread count always equals the unread items of the feed. Over real HTTP on the local
 * runtime with its normal settings. Short form in `npm test`: the issue's large fan-out scenario with 200
 * recipients and 4 bursts; RELIABILITY_LONG=1 (`npm run test:reliability`): 1,000 recipients and 12 bursts.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envNames } from '../../lib/wiring';
import { apiClient, eventually } from '../support/api';
import { queueIdle } from '../support/queues';
import { LONG } from '../support/reliability';
import { type Runtime, startTestRuntime } from '../support/runtime';

let runtime: Runtime;
let service: string;
let run = 0;
const user = (name: string) => `${name}-${process.pid}-${run}`;

beforeAll(async () => {
  runtime = await startTestRuntime();
  run = Date.now();
  service = await runtime.mintServiceToken('billing', ['notifications:write']);
});
afterAll(() => runtime?.stop());

const api = apiClient(() => runtime.httpUrl);

interface Item {
  readonly id: string;
  readonly notification_id: string;
  readonly title: string;
  readonly read_at: string | null;
}

const feed = async (token: string): Promise<Item[]> => {
  const items: Item[] = [];
  let cursor: string | null = null;
  do {
    const page = await api('GET', `/notifications?limit=100${cursor ? `&cursor=${cursor}` : ''}`, token);
    expect(page.status, JSON.stringify(page.body)).toBe(200);
    items.push(...(page.body.items as Item[]));
    cursor = page.body.next_cursor;
  } while (cursor);
  return items;
};

const unread = async (token: string) =>
  (await api('GET', '/notifications/unread-count', token)).body.count as number;

const notify = async (recipients: readonly string[], title: string, extra: Record<string, unknown> = {}) => {
  const created = await api('POST', '/notifications', service, {
    event_type: 'test.read',
    title,
    recipient_ids: recipients,
    ...extra,
  });
  expect(created.status).toBe(202);
  return created.body.id as string;
};

const fanoutQueueIdle = () => queueIdle('fanout');

describe('read-all and arrivals', () => {
  it('leaves unread an older notification whose fan-out reaches the user after a newer one and a read-all', async () => {
    const [dora, other] = [user('dora'), user('other')];
    const token = await runtime.mintUserToken(dora);
    // A is created first; its chunk naming dora is held back (as one of a large fan-out's last chunks is).
    const older = await notify([other], 'A');
    const newer = await notify([dora], 'B');
    await eventually(
      () => feed(token),
      (items) => items.length === 1,
    );
    expect((await api('POST', '/notifications/read-all', token)).body).toEqual({ updated: 1 });

    const sqs = new SQSClient({});
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: process.env[envNames.queueUrl('fanout')],
        MessageBody: JSON.stringify({ kind: 'chunk', notification_id: older, recipients: [dora] }),
      }),
    );
    sqs.destroy();
    const items = await eventually(
      () => feed(token),
      (found) => found.length === 2,
      60_000,
    );
    // Listed by delivery time, newest first: B, read, then A, which arrived last and is unread.
    expect(items.map((item) => [item.notification_id, item.read_at === null])).toEqual([
      [newer, false],
      [older, true],
    ]);
    expect(await unread(token)).toBe(1);
  }, 120_000);

  it('reaches a large audience with the user last, and a read-all meanwhile leaves the late item unread', async () => {
    const size = LONG ? 1000 : 200;
    const crowd = Array.from({ length: size - 1 }, (_, index) => user(`crowd${index}`));
    const erin = user('erin');
    const token = await runtime.mintUserToken(erin);
    const large = await notify([...crowd, erin], 'A');
    const small = await notify([erin], 'B');
    // Read-all as soon as B is in the feed (the unread count follows the feed, and is the cheaper poll).
    await eventually(
      () => unread(token),
      (count) => count > 0,
      60_000,
    );
    const { updated } = (await api('POST', '/notifications/read-all', token)).body as { updated: number };
    await eventually(fanoutQueueIdle, (idle) => idle, 90_000);
    const items = await feed(token);
    expect(items).toHaveLength(2);
    // Whatever the timing, every item is counted by the read-all or still unread (none lands read uncounted);
    // at most the late one is both, the overlap docs/notifications.md describes (the read-all saw it while its
    // chunk was still writing, and the chunk then moved it above the watermark). B is delivered by its own
    // request, so the read-all can now run while A's last chunk is still writing, where it used to follow it.
    const stillUnread = items.filter((item) => item.read_at === null);
    expect(updated + stillUnread.length).toBeGreaterThanOrEqual(2);
    expect(updated + stillUnread.length).toBeLessThanOrEqual(3);
    if (updated + stillUnread.length === 3)
      expect(stillUnread.map((item) => item.notification_id)).toEqual([large]);
    expect(await unread(token)).toBe(stillUnread.length);
    if (updated === 1) expect(stillUnread.map((item) => item.notification_id)).toEqual([large]);
    expect(items.map((item) => item.notification_id)).toContain(small);
  }, 150_000);

  it('under bursts of parallel posts and read-alls, no item is marked read without a read-all counting it', async () => {
    const fay = user('fay');
    const token = await runtime.mintUserToken(fay);
    let posted = 0;
    let marked = 0;
    for (let round = 0; round < (LONG ? 12 : 4); round += 1) {
      const posts = Array.from({ length: 8 }, (_, index) => notify([fay], `r${round}-${index}`));
      const readAlls = Array.from({ length: 3 }, async (_, index) => {
        await new Promise((resolve) => setTimeout(resolve, index * 40));
        return (await api('POST', '/notifications/read-all', token)).body.updated as number;
      });
      await Promise.all(posts);
      posted += posts.length;
      marked += (await Promise.all(readAlls)).reduce((sum, updated) => sum + updated, 0);
    }
    await eventually(fanoutQueueIdle, (idle) => idle, 60_000);
    const items = await eventually(
      () => feed(token),
      (found) => found.length === posted,
    );
    expect(items).toHaveLength(posted);
    const stillUnread = items.filter((item) => item.read_at === null).length;
    // Every item is unread or counted by a read-all (an item covered unseen, the bug, makes the sum smaller).
    // An item landing while a read-all runs may be counted by it and still end unread (docs/notifications.md).
    expect(marked + stillUnread).toBeGreaterThanOrEqual(posted);
    expect(stillUnread).toBeLessThanOrEqual(posted);
    expect(await unread(token)).toBe(stillUnread);
  }, 240_000);

  it('lists a scheduled notification by its arrival, above items created after it but delivered before', async () => {
    const gus = user('gus');
    const token = await runtime.mintUserToken(gus);
    // 4 s ahead: the request must still find it more than 1 s ahead (else it delivers at once), and the second
    // request must be delivered before it fires; 2.5 s left only 1.5 s for a loaded machine's stalls.
    const scheduled = await notify([gus], 'later', {
      scheduled_at: new Date(Date.now() + 4000).toISOString(),
    });
    const immediate = await notify([gus], 'now');
    const items = await eventually(
      () => feed(token),
      (found) => found.length === 2,
      60_000,
    );
    expect(items.map((item) => item.notification_id)).toEqual([scheduled, immediate]);
  }, 120_000);
});
