import { dollarsOf, scaleUnits, unitsOf } from './cost';
import type { MeteredRuntime } from './harness';
import type { ScenarioResult } from './scenarios';
import { sendNotification } from './scenarios';
import { BenchClient, inBatches } from './ws-client';

export interface LatencyResult {
  /** Whose view: the bench's bare WebSocket clients (absent in older results), or the client SDK's. */
  readonly via?: 'bench client' | 'client SDK';
  readonly recipients: number;
  readonly notifications: number;
  readonly frames: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Median time from the POST to the last of the notification's frames. */
  readonly lastFrameP50Ms: number;
}

export const percentile = (sorted: readonly number[], fraction: number): number => {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[index] as number;
};

/**
 * Opens `connections` WebSocket clients (users lat-0 … lat-N, one connection each), at most 25 handshakes at
 * a time so the 1,000-connection case stays within two cores.
 */
export const openClients = async (bench: MeteredRuntime, connections: number): Promise<BenchClient[]> =>
  inBatches(
    Array.from({ length: connections }, (_, index) => `lat-${index}`),
    25,
    async (user) => BenchClient.open(bench.runtime.wsUrl, await bench.runtime.mintUserToken(user)),
  );

/** Sends `notifications` notifications, one after the other, to the first `recipients` clients. */
export const measureLatency = async (
  bench: MeteredRuntime,
  serviceToken: string,
  clients: readonly BenchClient[],
  recipients: number,
  notifications: number,
): Promise<LatencyResult> => {
  const targets = clients.slice(0, recipients);
  const users = targets.map((_, index) => `lat-${index}`);
  const latencies: number[] = [];
  const lastFrames: number[] = [];
  for (let run = 0; run < notifications; run++) {
    const sentAt = performance.now();
    const id = await sendNotification(bench, serviceToken, users);
    const arrivals = await Promise.all(targets.map((client) => client.waitForNotification(id, 60_000)));
    for (const arrival of arrivals) latencies.push(arrival - sentAt);
    lastFrames.push(Math.max(...arrivals) - sentAt);
    await bench.settle();
  }
  latencies.sort((a, b) => a - b);
  lastFrames.sort((a, b) => a - b);
  return {
    via: 'bench client',
    recipients,
    notifications,
    frames: latencies.length,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    maxMs: latencies.at(-1) ?? Number.NaN,
    lastFrameP50Ms: percentile(lastFrames, 0.5),
  };
};

/** (b, connected) The cost of one notification to every client's user (1,000 in a full run), each connected. */
export const thousandConnectedCost = async (
  bench: MeteredRuntime,
  serviceToken: string,
  clients: readonly BenchClient[],
): Promise<ScenarioResult> => {
  const users = clients.map((_, index) => `lat-${index}`);
  const usage = await bench.measure(async () => {
    const id = await sendNotification(bench, serviceToken, users);
    await Promise.all(clients.map((client) => client.waitForNotification(id, 60_000)));
  });
  const units = { ...unitsOf(usage), wsConnectionMinutes: 0 };
  const dollars = dollarsOf(scaleUnits(units, 1e6));
  return {
    id: 'b2',
    title: `one notification to ${clients.length.toLocaleString('en-US')} recipients, each with one open connection (in_app+toast)`,
    operation: 'notification',
    measured: 1,
    unitsPerOperation: units,
    dollarsPerMillion: dollars,
    usage,
    notes: ['connection-minutes of the open connections are not charged to the notification'],
  };
};
