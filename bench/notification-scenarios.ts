import type { MeteredRuntime } from './harness';
import { perOperation, result, type ScenarioResult, sendNotification } from './scenarios';
import { BenchClient } from './ws-client';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * (a2) Scenario (a) under a steady load: `perSecond` notifications a second for `seconds`, each to one of
 * `users` connected recipients in turn (one connection each), every POST sent on time whether or not the
 * earlier ones were answered. Where work is batched (SQS receives of up to 10, one invocation per batch) it
 * shows here; the units are per notification, as in (a).
 */
export const steadyConnectedRecipients = async (
  bench: MeteredRuntime,
  serviceToken: string,
  options: { readonly perSecond: number; readonly seconds: number; readonly users: number },
): Promise<ScenarioResult> => {
  const users = Array.from({ length: options.users }, (_, index) => `bench-a2-${index}`);
  const clients = await Promise.all(
    users.map(async (user) => BenchClient.open(bench.runtime.wsUrl, await bench.runtime.mintUserToken(user))),
  );
  const once = async (index: number) => {
    const client = clients[index % clients.length] as BenchClient;
    const id = await sendNotification(bench, serviceToken, [users[index % users.length] as string]);
    await client.waitForNotification(id, 60_000);
  };
  await Promise.all(users.map((_, index) => once(index))); // warm: no INIT in the figures
  const total = options.perSecond * options.seconds;
  const usage = await bench.measure(async () => {
    const started = performance.now();
    const sent: Promise<void>[] = [];
    for (let index = 0; index < total; index++) {
      await sleep(started + (index * 1000) / options.perSecond - performance.now());
      sent.push(once(index));
    }
    await Promise.all(sent);
  });
  await Promise.all(clients.map((client) => client.close()));
  return result(
    'a2',
    `(a) at a steady ${options.perSecond} notifications/s for ${options.seconds} s, ${options.users} connected recipients in turn`,
    'notification',
    total,
    perOperation(usage, total),
    usage,
  );
};
