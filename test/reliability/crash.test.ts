import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mintServiceToken, mintUserToken, readDevAuth } from '../../local/dev-auth';
import { freePort } from '../../local/dynamodb-local';
import { WebhookReceiver } from '../e2e/webhook-receiver';
import { apiClient } from '../support/api';
import { deadLettered, describeLife, type MessageLife, QueueHistory } from '../support/queue-history';
import { LONG, reportFigures } from '../support/reliability';
import { type RuntimeProcess, startRuntimeProcess } from '../support/runtime-process';

/**
 * Crash durability, end to end: `npm start --data DIR` in a child process takes a stream of notifications (to a
 * few users, and to more than one fan-out chunk) and events (to a webhook that answers slowly), and is SIGKILLed
 * at a random moment — mid fan-out, mid event delivery, mid webhook POST — then started again on the same data.
 * Requests cut off by the kill are retried after the restart with their Idempotency-Key, as a client would.
 * In the end every accepted notification is in every recipient's feed exactly once with exact unread counts,
 * and every accepted event reached the webhook and is recorded as delivered.
 *
 * Short form in `npm test`; RELIABILITY_LONG=1 (`npm run test:reliability`) kills more often with more traffic.
 */
const KILLS = LONG ? 8 : 1;
const USERS = 120; // a notification to all of them is two fan-out chunks (100 per chunk)
const CONCURRENCY = LONG ? 8 : 4;

const work = mkdtempSync(join(tmpdir(), 'notify-crash-'));
const dataDir = join(work, 'data');
const receiver = new WebhookReceiver();
/** The queues' journals across the kills, for the failure messages (a chunk dead-lettered, left hidden). */
const history = new QueueHistory(dataDir, join(work, 'journals'));
let runtime: RuntimeProcess | undefined;

afterAll(async () => {
  await runtime?.crash();
  await receiver.stop();
  rmSync(work, { recursive: true, force: true });
});

const users = Array.from({ length: USERS }, (_, index) => `crash-user-${index}`);
const pick = <T>(list: readonly T[], count: number): T[] =>
  [...list].sort(() => Math.random() - 0.5).slice(0, count);

interface Request {
  readonly path: '/notifications' | '/events';
  readonly body: Record<string, unknown>;
  readonly key: string;
}

/** A random write: mostly small notifications, some to every user (multi-chunk fan-out), some events. */
const randomRequest = (index: number): Request => {
  const roll = Math.random();
  const key = randomUUID();
  if (roll < 0.25) {
    return {
      path: '/events',
      key,
      body: { event_type: 'crash.happened', source: 'crashtest', version: 1, data: { index } },
    };
  }
  const recipients = roll < 0.35 ? users : pick(users, 1 + Math.floor(Math.random() * 10));
  return {
    path: '/notifications',
    key,
    body: {
      event_type: 'crash.note',
      title: `note ${index}`,
      recipient_ids: recipients,
      // Counted per category by GET /notifications/counts (checked against the feeds in the end).
      ...(index % 3 === 2 ? {} : { category: `crash.c${index % 3}` }),
    },
  };
};

describe('the local runtime killed at random points', () => {
  it(
    'loses no accepted notification or event and doubles no feed item',
    async () => {
      await receiver.start();
      const port = await freePort();
      // SQS time 10× faster (a failed message returns after 18 s, not 180 s) and short webhook retries: this
      // shared machine can be slow enough for invocations to hit their timeouts, and those must settle too.
      const start = () =>
        startRuntimeProcess({
          work,
          dataDir,
          port,
          env: { NOTIFY_LOCAL_TIME_SCALE: '0.1', NOTIFY_WEBHOOK_RETRY_SCHEDULE: '1s,2s,4s,8s,16s,32s' },
        });
      runtime = await start();
      const settings = readDevAuth(join(work, 'dev-auth.json'));
      if (!settings) throw new Error('npm start wrote no dev-auth.json');
      const service = await mintServiceToken(settings, 'crashtest', [
        'notifications:write',
        'events:publish',
        'webhooks:admin',
      ]);
      const api = apiClient(() => runtime?.restUrl ?? '');
      const secret = `crash-secret-${randomUUID()}`;
      const hook = await api('POST', '/webhooks', service, {
        url: receiver.endpoint('/crash', secret, [{ status: 200, delayMs: 300 }]),
        secret,
        event_filters: ['crash.*'],
        name: 'crash test',
      });
      expect(hook.status).toBe(201);

      const expectedFeed = new Map<string, string[]>(users.map((user) => [user, []]));
      const acceptedEvents = new Set<string>();
      let pending: Request[] = [];
      let accepted = 0;
      const failures: string[] = [];
      /** Called after each accepted answer: the kill right after a 202 hooks in here. */
      let afterAccept = () => {};
      const accept = (request: Request, id: string) => {
        accepted += 1;
        if (request.path === '/events') acceptedEvents.add(id);
        else for (const user of request.body.recipient_ids as string[]) expectedFeed.get(user)?.push(id);
        afterAccept();
      };
      /** Sends one request; a 202 is accepted, anything else (the kill) is retried after the restart. */
      const send = async (request: Request) => {
        try {
          const answer = await api('POST', request.path, service, request.body, {
            'idempotency-key': request.key,
          });
          if (answer.status === 202) return accept(request, answer.body.id as string);
          failures.push(`${answer.status} ${JSON.stringify(answer.body)}`);
          pending.push(request);
        } catch {
          pending.push(request);
        }
      };

      let sent = 0;
      const killDelays: number[] = [];
      for (let cycle = 0; cycle <= KILLS; cycle += 1) {
        // Requests cut off by the last kill, retried with their key: accepted once, whatever the kill left.
        // 503s of a slow start are retried too, as a client would (with a pause).
        for (let round = 0; round < 20 && pending.length > 0; round += 1) {
          const retries = pending;
          pending = [];
          for (const request of retries) await send(request);
          if (pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 1000));
        }
        expect(pending, `${failures.join('\n')}\n${runtime.stderr()}`).toEqual([]);
        if (cycle === KILLS) break;
        // Kill once a random amount of traffic was accepted, plus a random moment: mid fan-out, mid webhook POST.
        const killAt = accepted + 10 + Math.floor(Math.random() * (LONG ? 40 : 20));
        let running = true;
        const traffic = Array.from({ length: CONCURRENCY }, async () => {
          while (running) {
            sent += 1;
            await send(randomRequest(sent));
          }
        });
        // Every other kill lands the instant a 202 arrives (the request's work has had no time at all).
        const killAfter = cycle % 2 === 0 ? 0 : Math.floor(Math.random() * 1500);
        killDelays.push(killAfter);
        let crashed: Promise<void> | undefined;
        if (killAfter === 0) {
          afterAccept = () => {
            if (accepted >= killAt) crashed ??= runtime?.crash();
          };
        }
        while (accepted < killAt) await new Promise((resolve) => setTimeout(resolve, 20));
        afterAccept = () => {};
        await new Promise((resolve) => setTimeout(resolve, killAfter));
        await (crashed ?? runtime.crash());
        running = false;
        await Promise.all(traffic);
        history.keep();
        runtime = await start();
      }

      // Everything accepted settles: poll the unread counts until they match (or time runs out).
      const tokens = new Map(
        await Promise.all(users.map(async (user) => [user, await mintUserToken(settings, user)] as const)),
      );
      const unreadCounts = () =>
        Promise.all(
          users.map(async (user) => {
            const answer = await api('GET', '/notifications/unread-count', tokens.get(user));
            return answer.body.count as number;
          }),
        );
      const expectedCounts = users.map((user) => expectedFeed.get(user)?.length ?? 0);
      let counts = await unreadCounts();
      for (
        let round = 0;
        round < 300 && counts.some((count, index) => count !== expectedCounts[index]);
        round += 1
      ) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        counts = await unreadCounts();
      }
      const context = `kills ${killDelays.join(', ')} ms after the target; ${sent} requests, ${accepted} accepted`;

      /** A user's feed: notification ids and the categories of its items. */
      const feedOf = async (user: string) => {
        const ids: string[] = [];
        const categories: string[] = [];
        let cursor: string | null = null;
        do {
          const page: {
            status: number;
            body: {
              items: { notification_id: string; category: string | null }[];
              next_cursor: string | null;
            };
          } = await api(
            'GET',
            `/notifications?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
            tokens.get(user),
          );
          expect(page.status).toBe(200);
          ids.push(...page.body.items.map((item) => item.notification_id));
          categories.push(...page.body.items.flatMap((item) => (item.category ? [item.category] : [])));
          cursor = page.body.next_cursor;
        } while (cursor);
        return { ids, categories };
      };
      const lives = history.lives();
      const fanoutLives = [...lives.values()].filter((life) => life.queues[0] === 'fanout');
      const dlqs = deadLettered(lives);
      /** How many messages were received how often: `1×70 2×10 3×2`. */
      const receiveCounts = (of: MessageLife[]) => {
        const tally = new Map<number, number>();
        for (const { maxReceiveCount } of of)
          tally.set(maxReceiveCount, (tally.get(maxReceiveCount) ?? 0) + 1);
        return [...tally]
          .sort(([a], [b]) => a - b)
          .map(([count, n]) => `${count}×${n}`)
          .join(' ');
      };

      /**
       * Why counts differ: per user what its feed lacks (or holds twice), per notification missing somewhere
       * whose feeds hold it, and the life of its fan-out messages; what the DLQs hold; the runtime's stderr.
       */
      const whyCountsDiffer = async (): Promise<string> => {
        const lines: string[] = [];
        const missing = new Map<string, string[]>(); // notification → users lacking it
        const holders = new Map<string, number>(); // notification → feeds holding it
        for (const user of users) {
          const { ids } = await feedOf(user);
          for (const id of ids) holders.set(id, (holders.get(id) ?? 0) + 1);
          const expected = expectedFeed.get(user) ?? [];
          const lacks = expected.filter((id) => !ids.includes(id));
          const extra = ids.filter((id, index) => !expected.includes(id) || ids.indexOf(id) !== index);
          for (const id of lacks) missing.set(id, [...(missing.get(id) ?? []), user]);
          if (lacks.length > 0 || extra.length > 0) {
            lines.push(
              `${user} lacks [${lacks.join(', ')}]${extra.length > 0 ? `, extra [${extra.join(', ')}]` : ''}`,
            );
          }
        }
        for (const [id, lacking] of missing) {
          const recipients = [...expectedFeed].filter(([, ids]) => ids.includes(id)).length;
          lines.push(
            `notification ${id}: in ${holders.get(id) ?? 0} of ${recipients} feeds; missing for ` +
              `${lacking.map((user) => user.replace('crash-user-', '')).join(',')}`,
          );
          const messages: MessageLife[] = [...lives.values()].filter((life) => life.body.includes(id));
          for (const life of messages) lines.push(`  ${describeLife(life)}`);
          if (messages.length === 0) lines.push('  no queue message of it recorded');
        }
        lines.push(`dead-lettered now: ${dlqs.length}`, ...dlqs.map((life) => `  ${describeLife(life)}`));
        return `${lines.join('\n')}\n${runtime?.stderr() ?? ''}`;
      };
      if (counts.some((count, index) => count !== expectedCounts[index])) {
        expect(counts, `${context}\n${await whyCountsDiffer()}`).toEqual(expectedCounts);
      }

      // Each feed holds exactly the accepted notifications, each once.
      for (const user of users) {
        const { ids, categories } = await feedOf(user);
        expect(ids.sort(), `${user}: ${context}`).toEqual([...(expectedFeed.get(user) ?? [])].sort());
        // The counts equal the feed: every item unseen and unread, per category too.
        const perCategory = new Map<string, number>();
        for (const category of categories) perCategory.set(category, (perCategory.get(category) ?? 0) + 1);
        const all = (n: number) => ({ unseen: n, unread: n, total: n });
        expect(
          (await api('GET', '/notifications/counts', tokens.get(user))).body,
          `${user}: ${context}`,
        ).toEqual({
          ...all(ids.length),
          categories: Object.fromEntries([...perCategory].map(([category, n]) => [category, all(n)])),
        });
      }

      /** The webhook's delivery records: event id → status. */
      const deliveryRecords = async (): Promise<Map<string, string>> => {
        const found = new Map<string, string>();
        let cursor: string | null = null;
        do {
          const page: { body: { items: { id: string; status: string }[]; next_cursor: string | null } } =
            await api(
              'GET',
              `/webhooks/${hook.body.id}/deliveries?limit=100${cursor ? `&cursor=${cursor}` : ''}`,
              service,
            );
          for (const item of page.body.items) found.set(item.id, item.status);
          cursor = page.body.next_cursor;
        } while (cursor);
        return found;
      };

      // Every accepted event reached the webhook (at least once) and is recorded as delivered.
      const delivered = () => new Set(receiver.at('/crash').map((request) => request.headers['webhook-id']));
      for (let round = 0; round < 300 && [...acceptedEvents].some((id) => !delivered().has(id)); round += 1) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      const undelivered = [...acceptedEvents].filter((id) => !delivered().has(id));
      // What the service recorded of an event that never arrived, and its errors, say where it stopped.
      const records = undelivered.length > 0 ? await deliveryRecords() : new Map<string, string>();
      expect(
        undelivered,
        `${context}; recorded: ${JSON.stringify(undelivered.map((id) => [id, records.get(id) ?? 'none']))}\n${runtime.stderr()}`,
      ).toEqual([]);
      // An attempt cut off between its POST and recording the outcome is made again once its claim expires
      // (the message comes back): the record reaches `succeeded` then, so wait for it as for the POSTs.
      let statuses = await deliveryRecords();
      for (
        let round = 0;
        round < 300 && [...acceptedEvents].some((id) => statuses.get(id) !== 'succeeded');
        round += 1
      ) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        statuses = await deliveryRecords();
      }
      const unsettled = [...acceptedEvents].filter((id) => statuses.get(id) !== 'succeeded');
      expect(
        unsettled,
        `${context}; recorded: ${JSON.stringify(unsettled.map((id) => [id, statuses.get(id) ?? 'none']))}\n${runtime.stderr()}`,
      ).toEqual([]);
      const repeats = receiver.at('/crash').length - delivered().size;
      reportFigures(
        `crash suite: ${KILLS} kill(s) (${context}), ${expectedCounts.reduce((a, b) => a + b, 0)} feed items, ` +
          `${acceptedEvents.size} events, ${repeats} repeated webhook POST(s) (at-least-once); fan-out messages: ` +
          `${fanoutLives.length}, by receive count ${receiveCounts(fanoutLives)}; ` +
          `${dlqs.length} dead-lettered`,
      );
      // The fan-out messages received most often, and in which of the runtime's lives (1: until the first kill).
      const mostReceived = fanoutLives.filter((life) => life.maxReceiveCount >= 3);
      if (mostReceived.length > 0) reportFigures(mostReceived.map(describeLife).join('\n'));
    },
    LONG ? 3_600_000 : 900_000,
  );
});
