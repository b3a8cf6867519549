import type { MeteredRuntime } from './harness';
import { expectStatus, perOperation, result, type ScenarioResult } from './scenarios';

/*
 * The inbox's cost figures: a state change, the counts read, and what a category and tags add to the fan-out per
 * recipient (docs/notifications.md, "Counts: why read, not kept"; docs/performance.md).
 */

const json = (body: unknown): RequestInit => ({ method: 'POST', body: JSON.stringify(body) });

/** A notification of the benchmark's typical size to `recipients`, in_app only, with `extra` fields. */
const notify = async (
  bench: MeteredRuntime,
  serviceToken: string,
  recipients: readonly string[],
  extra: Record<string, unknown> = {},
) =>
  expectStatus(
    await bench.api(
      '/notifications',
      serviceToken,
      json({
        event_type: 'bench.inbox',
        title: 'Benchmark',
        body: 'A notification of typical size for the benchmark.',
        data: { order_id: 'o-123456', amount: 42 },
        recipient_ids: recipients,
        ...extra,
      }),
    ),
    202,
    'POST /notifications',
  );

/** The receiver ids of a user's feed (every state but snoozed), newest first. */
const feedIds = async (bench: MeteredRuntime, token: string): Promise<string[]> => {
  const page = await expectStatus(
    await bench.api('/notifications?state=all&limit=100', token),
    200,
    'GET /notifications',
  );
  return ((await page.json()) as { items: { id: string }[] }).items.map((item) => item.id);
};

/**
 * (i1) One state change of one item: read, seen, archive and unarchive in turn, each a route call on an item in
 * the state before (the changes' own writes; the frames go to no open connection).
 */
export const stateChange = async (
  bench: MeteredRuntime,
  serviceToken: string,
  rounds: number,
): Promise<ScenarioResult> => {
  const user = 'bench-i1';
  for (let index = 0; index < rounds + 1; index++) await notify(bench, serviceToken, [user]);
  await bench.settle();
  const token = await bench.runtime.mintUserToken(user);
  const ids = await feedIds(bench, token);
  const changes = async (id: string) => {
    await expectStatus(await bench.api(`/notifications/${id}/read`, token, { method: 'POST' }), 200, 'read');
    await expectStatus(await bench.api('/notifications/seen', token, json({ ids: [id] })), 200, 'seen');
    await expectStatus(
      await bench.api(`/notifications/${id}/archive`, token, { method: 'POST' }),
      200,
      'archive',
    );
    await expectStatus(
      await bench.api(`/notifications/${id}/unarchive`, token, { method: 'POST' }),
      200,
      'unarchive',
    );
  };
  await changes(ids[rounds] as string); // warm-up
  const usage = await bench.measure(async () => {
    for (const id of ids.slice(0, rounds)) await changes(id);
  });
  return result(
    'i1',
    'one state change of a feed item (read, seen, archive, unarchive in turn)',
    'state change',
    rounds * 4,
    perOperation(usage, rounds * 4),
    usage,
    ['each change reads the item and the feed state (strongly consistent) and writes the item once'],
  );
};

/** (i2) GET /notifications/counts for a user with 20 categories, 2 items each, plus 10 without a category. */
export const countsRead = async (
  bench: MeteredRuntime,
  serviceToken: string,
  repetitions: number,
): Promise<ScenarioResult> => {
  const user = 'bench-i2';
  for (let index = 0; index < 50; index++) {
    await notify(bench, serviceToken, [user], index < 40 ? { category: `bench.category${index % 20}` } : {});
  }
  await bench.settle();
  const token = await bench.runtime.mintUserToken(user);
  const once = async () => expectStatus(await bench.api('/notifications/counts', token), 200, 'GET counts');
  await once();
  const usage = await bench.measure(async () => {
    for (let run = 0; run < repetitions; run++) await once();
  });
  return result(
    'i2',
    'GET /notifications/counts, 50 items in 20 categories',
    'counts read',
    repetitions,
    perOperation(usage, repetitions),
    usage,
    ['1 RRU for the feed state + 1 RRU per 4 KB of the user’s receivers (≈ 13 of ~300 B)'],
  );
};

/**
 * (i3) The fan-out per recipient of a notification to 100 recipients with a category and 5 tags, beside the same
 * without them (in_app only, none connected).
 */
export const fanoutWithCategory = async (
  bench: MeteredRuntime,
  serviceToken: string,
  repetitions: number,
  rows: { readonly plain: boolean; readonly categorized: boolean },
): Promise<ScenarioResult[]> => {
  const recipients = Array.from({ length: 100 }, (_, index) => `bench-i3-${index}`);
  const withCategory = {
    category: 'bench.invoices.reminders',
    tags: ['vip', 'region:eu-west', 'plan.enterprise', 'quarter:2026-q4', 'campaign-renewal'],
  };
  const measure = async (extra: Record<string, unknown>) => {
    await notify(bench, serviceToken, recipients, extra); // warm-up
    await bench.settle();
    return bench.measure(async () => {
      for (let run = 0; run < repetitions; run++) await notify(bench, serviceToken, recipients, extra);
      await bench.settle();
    });
  };
  const perRecipient = repetitions * recipients.length;
  const results: ScenarioResult[] = [];
  if (rows.plain) {
    const plain = await measure({});
    results.push(
      result(
        'i3a',
        'fan-out to 100 recipients, in_app, no category or tags',
        'recipient',
        perRecipient,
        perOperation(plain, perRecipient),
        plain,
      ),
    );
  }
  if (rows.categorized) {
    const categorized = await measure(withCategory);
    results.push(
      result(
        'i3b',
        'the same with a category and 5 tags',
        'recipient',
        perRecipient,
        perOperation(categorized, perRecipient),
        categorized,
        ['the category and tags are copied onto each receiver: it stays under 1 KB, one write unit'],
      ),
    );
  }
  return results;
};
