import type { Runtime } from '../local/runtime';
import { percentile } from './latency';
import { BenchClient, inBatches } from './ws-client';

/**
 * The load run of the reliability suite: `clients` concurrent users, each with an open WebSocket, for
 * `seconds`: each loops over POST /notifications (to itself and one other user), GET /notifications and
 * GET /notifications/unread-count, with 250 ms of think time between rounds. Afterwards every accepted notification must be in its recipients' unread
 * counts and have reached their connections as a frame: nothing lost. Reports errors and p50/p99 per request.
 */
export interface LoadResult {
  readonly clients: number;
  readonly seconds: number;
  readonly requests: number;
  /** Answers other than the expected 2xx, and failed requests. */
  readonly errors: number;
  /** Of those, 503 `unavailable`: a function that ran past its timeout (a starved machine). */
  readonly timeouts: number;
  readonly errorSamples: readonly string[];
  readonly accepted: number;
  /** Accepted notifications missing from a recipient's unread count or frames after the run settled. */
  readonly lostFeedItems: number;
  readonly lostFrames: number;
  readonly perRequest: readonly {
    readonly request: string;
    readonly count: number;
    p50Ms: number;
    p99Ms: number;
  }[];
}

const THINK_MS = 250;
const REQUESTS = ['POST /notifications', 'GET /notifications', 'GET /notifications/unread-count'] as const;

export const runLoad = async (
  runtime: Runtime,
  options: { readonly clients: number; readonly seconds: number; readonly settleMs?: number },
): Promise<LoadResult> => {
  const users = Array.from({ length: options.clients }, (_, index) => `load-${index}`);
  const service = await runtime.mintServiceToken('load', ['notifications:write']);
  const tokens = await Promise.all(users.map((user) => runtime.mintUserToken(user)));
  // Connections open 10 at a time, each retried twice: on a busy machine a handshake can take long.
  const sockets = await inBatches(users, 10, async (user) => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await BenchClient.open(runtime.wsUrl, await runtime.mintUserToken(user));
      } catch (error) {
        if (attempt === 3) throw error;
      }
    }
  });
  const durations = new Map<string, number[]>(REQUESTS.map((request) => [request, []]));
  const errorSamples: string[] = [];
  let errors = 0;
  let timeouts = 0;
  let requests = 0;
  /** Accepted notification ids per recipient index. */
  const expected = users.map(() => [] as string[]);

  const timed = async (
    request: (typeof REQUESTS)[number],
    path: string,
    token: string,
    init: RequestInit = {},
  ) => {
    requests += 1;
    const started = performance.now();
    try {
      const response = await fetch(`${runtime.httpUrl}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      });
      const body = await response.text();
      durations.get(request)?.push(performance.now() - started);
      if (response.status >= 300) {
        errors += 1;
        if (response.status === 503) timeouts += 1;
        if (errorSamples.length < 5)
          errorSamples.push(`${request} → ${response.status} ${body.slice(0, 200)}`);
        return undefined;
      }
      return body ? (JSON.parse(body) as Record<string, unknown>) : {};
    } catch (error) {
      errors += 1;
      if (errorSamples.length < 5) errorSamples.push(`${request} → ${(error as Error).message}`);
      return undefined;
    }
  };

  const endAt = performance.now() + options.seconds * 1000;
  await Promise.all(
    users.map(async (user, index) => {
      while (performance.now() < endAt) {
        const other = (index + 1 + Math.floor(Math.random() * (users.length - 1))) % users.length;
        const created = await timed('POST /notifications', '/notifications', service, {
          method: 'POST',
          body: JSON.stringify({
            event_type: 'load.ping',
            title: `from ${user}`,
            channels: ['in_app', 'realtime'],
            recipient_ids: [user, users[other]],
          }),
        });
        if (typeof created?.id === 'string') {
          expected[index]?.push(created.id);
          expected[other]?.push(created.id);
        }
        await timed('GET /notifications', '/notifications?limit=20', tokens[index] as string);
        await timed(
          'GET /notifications/unread-count',
          '/notifications/unread-count',
          tokens[index] as string,
        );
        // A client's think time between rounds (a user does not poll in a tight loop).
        await new Promise((resolve) => setTimeout(resolve, THINK_MS));
      }
    }),
  );

  // Settle: every accepted notification must show up in the unread counts and as frames.
  const missingCounts = async () => {
    let missing = 0;
    await Promise.all(
      users.map(async (_, index) => {
        const response = await fetch(`${runtime.httpUrl}/notifications/unread-count`, {
          headers: { authorization: `Bearer ${tokens[index]}` },
        });
        const { count } = (await response.json()) as { count: number };
        missing += Math.max(0, (expected[index]?.length ?? 0) - count);
      }),
    );
    return missing;
  };
  const missingFrames = () =>
    sockets.reduce(
      (sum, socket, index) =>
        sum + (expected[index] ?? []).filter((id) => !socket.notificationArrivals.has(id)).length,
      0,
    );
  const settleUntil = performance.now() + (options.settleMs ?? 60_000);
  let lostFeedItems = await missingCounts();
  while ((lostFeedItems > 0 || missingFrames() > 0) && performance.now() < settleUntil) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    lostFeedItems = await missingCounts();
  }
  await Promise.all(sockets.map((socket) => socket.close()));

  return {
    clients: options.clients,
    seconds: options.seconds,
    requests,
    errors,
    timeouts,
    errorSamples,
    accepted: expected.reduce((sum, list) => sum + list.length, 0) / 2,
    lostFeedItems,
    lostFrames: missingFrames(),
    perRequest: REQUESTS.map((request) => {
      const sorted = [...(durations.get(request) ?? [])].sort((a, b) => a - b);
      return {
        request,
        count: sorted.length,
        p50Ms: percentile(sorted, 0.5),
        p99Ms: percentile(sorted, 0.99),
      };
    }),
  };
};
