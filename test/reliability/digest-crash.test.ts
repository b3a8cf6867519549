import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mintServiceToken, mintUserToken, readDevAuth } from '../../local/dev-auth';
import { freePort } from '../../local/dynamodb-local';
import { apiClient, eventually } from '../support/api';
import { LONG } from '../support/reliability';
import { type RuntimeProcess, startRuntimeProcess } from '../support/runtime-process';

/**
 * `npm start --data` killed (SIGKILL to the whole process group) while digest batches are open, while
 * notifications join them (requests cut off are retried with their Idempotency-Key, as a client would) and as
 * a batch closes: after the restarts every accepted notification is in exactly one digest in the recipient's
 * feed, no digest is there twice, and the unread count is the number of digests (docs/digests.md).
 */
const WINDOW_SECS = 4;
/** Each round kills twice: with requests in flight, and around a close. `npm test` runs the short form. */
const ROUNDS = LONG ? 4 : 1;
const PER_ROUND = 8;

const work = mkdtempSync(join(tmpdir(), 'notify-digest-crash-'));
const dataDir = join(work, 'data');
let runtime: RuntimeProcess | undefined;

afterAll(async () => {
  await runtime?.crash();
  rmSync(work, { recursive: true, force: true });
});

interface DigestItem {
  readonly id: string;
  readonly data: { digest?: { count: number; items: { notification_id: string }[] } };
}

describe('the runtime killed while digest batches are open and closing', () => {
  it('sends every accepted notification in exactly one digest, each digest once', async () => {
    const port = await freePort();
    const start = () => startRuntimeProcess({ work, dataDir, port, env: { NOTIFY_LOCAL_TIME_SCALE: '0.1' } });
    runtime = await start();
    const settings = readDevAuth(join(work, 'dev-auth.json'));
    if (!settings) throw new Error('npm start wrote no dev-auth.json');
    const service = await mintServiceToken(settings, 'digest-crash', ['notifications:write']);
    const user = `digest-crash-${Date.now()}`;
    const userToken = await mintUserToken(settings, user);
    const api = apiClient(() => runtime?.restUrl ?? '');

    const accepted = new Set<string>();
    let pending: number[] = [];
    const send = async (index: number) => {
      try {
        const answer = await api(
          'POST',
          '/notifications',
          service,
          {
            event_type: 'comment.created',
            title: `Comment ${index}`,
            recipient_ids: [user],
            digest: { key: 'post-9', window_secs: WINDOW_SECS, max_items: 50 },
          },
          { 'idempotency-key': `${user}-${index}` },
        );
        if (answer.status === 202) accepted.add(answer.body.id as string);
        else pending.push(index);
      } catch {
        pending.push(index); // cut off by the kill
      }
    };
    const retryPending = async () => {
      for (let round = 0; round < 20 && pending.length > 0; round += 1) {
        const retries = pending;
        pending = [];
        for (const index of retries) await send(index);
        if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      expect(pending, runtime?.stderr()).toEqual([]);
    };

    for (let round = 0; round < ROUNDS; round += 1) {
      // Requests in flight when the process is killed: some joined, some cut off and retried after the restart.
      const indexes = Array.from({ length: PER_ROUND }, (_, offset) => round * PER_ROUND + offset);
      const inFlight = Promise.all(indexes.map((index) => send(index)));
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 400));
      await runtime.crash();
      await inFlight;
      runtime = await start();
      await retryPending();
      // Then killed again somewhere around the window's close: before it, while the digest is being sent, after.
      await new Promise((resolve) => setTimeout(resolve, (WINDOW_SECS - 1 + Math.random() * 2) * 1000));
      await runtime.crash();
      runtime = await start();
    }

    const digests = await eventually(
      async () =>
        ((await api('GET', '/notifications?limit=100', userToken)).body.items ?? []) as DigestItem[],
      (items) => items.reduce((sum, item) => sum + (item.data.digest?.count ?? 0), 0) >= accepted.size,
      240_000,
    );
    const members = digests.flatMap(
      (item) => item.data.digest?.items.map((member) => member.notification_id) ?? [],
    );
    expect(members.sort(), runtime.stderr()).toEqual([...accepted].sort());
    expect(digests.reduce((sum, item) => sum + (item.data.digest?.count ?? 0), 0)).toBe(accepted.size);
    expect(new Set(digests.map((item) => item.id)).size).toBe(digests.length);
    expect((await api('GET', '/notifications/unread-count', userToken)).body.count).toBe(digests.length);
    // Nothing more arrives later: no batch is sent twice.
    await new Promise((resolve) => setTimeout(resolve, (WINDOW_SECS + 2) * 1000));
    const after = (await api('GET', '/notifications?limit=100', userToken)).body.items as DigestItem[];
    expect(after.map((item) => item.id).sort()).toEqual(digests.map((item) => item.id).sort());
  }, 600_000);
});
