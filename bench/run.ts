import { countsRead, fanoutWithCategory, stateChange } from './inbox-scenarios';
import '../local/sdk-env';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { measureClientSize } from './client-size';
import { measureColdStarts } from './cold-start';
import type { ServiceUnits } from './cost';
import { digestAgainstSeparate } from './digest-scenarios';
import { fallbackSteps } from './fallback-scenarios';
import { machineLoad, startMeteredRuntime, waitForQuiet } from './harness';
import { idleCost } from './idle-cost';
import { measureIntrospectionCost } from './introspection';
import { measureLatency, openClients, thousandConnectedCost } from './latency';
import { runLoad } from './load';
import { steadyConnectedRecipients } from './notification-scenarios';
import { PRICES } from './prices';
import { heldPush, measurePushLatency, pushToOfflineDevices } from './push-scenarios';
import { printResults } from './report';
import { QUICK_SCALE_SIZES, runScaleSimulation, SCALE_SIZES } from './scale';
import { buildScaleReport, printScaleReport } from './scale-report';
import {
  connectedHour,
  feedPage,
  oneConnectedRecipient,
  oneWebhookDelivery,
  thousandRecipients,
} from './scenarios';
import { measureSdkLatency } from './sdk-latency';

const quick = process.argv.includes('--quick');
const only = process.argv
  .find((arg) => arg.startsWith('--only='))
  ?.slice('--only='.length)
  .split(',');
const wanted = (part: string) => !only || only.includes(part);
/** `--scenarios=a,a2`: only these cost scenarios (ids as in the table), merged into the last run's list. */
const scenarioIds = process.argv
  .find((arg) => arg.startsWith('--scenarios='))
  ?.slice('--scenarios='.length)
  .split(',');
const scenarioWanted = (id: string) => !scenarioIds || scenarioIds.includes(id);
/** A number option `--name=N`. */
const numberOption = (name: string): number | undefined => {
  const raw = process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
  return raw === undefined ? undefined : Number(raw);
};

/** The scale simulation runs only when asked for (`--only=scale`): it takes minutes. */
const runScale = async () => {
  const base = quick ? QUICK_SCALE_SIZES : SCALE_SIZES;
  const sizes = {
    ...base,
    roomMembers: numberOption('room') ?? base.roomMembers,
    connections: numberOption('connections') ?? base.connections,
    chunkSample: process.argv.includes('--full-chains') ? 0 : base.chunkSample,
  };
  const started = performance.now();
  const simulation = await runScaleSimulation(sizes);
  const report = buildScaleReport(simulation);
  console.log(printScaleReport(report, simulation));
  const seconds = (performance.now() - started) / 1000;
  console.log(`\nscale simulation took ${seconds.toFixed(0)} s; figures in bench/scale-results.json\n`);
  writeFormatted(join(import.meta.dirname, 'scale-results.json'), {
    generatedAt: new Date().toISOString(),
    sizes,
    seconds,
    ...report,
  });
};

/** Written as the repository's formatter wants it, so a committed file passes `biome check`. */
const writeFormatted = (file: string, value: unknown) => {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
  spawnSync(join(import.meta.dirname, '..', 'node_modules', '.bin', 'biome'), ['format', '--write', file], {
    stdio: 'ignore',
  });
};

const RESULTS_FILE = join(import.meta.dirname, 'results.json');
const previousResults = (): Record<string, unknown> =>
  existsSync(RESULTS_FILE) ? (JSON.parse(readFileSync(RESULTS_FILE, 'utf8')) as Record<string, unknown>) : {};

/** The last run's scenarios with those of this run in their place (new ones at the end). */
const mergedScenarios = (fresh: readonly unknown[]): unknown[] => {
  const byId = (list: readonly unknown[]) => new Map(list.map((item) => [(item as { id: string }).id, item]));
  const latest = byId(fresh);
  const previous = (previousResults().scenarios ?? []) as unknown[];
  const merged = previous.map((item) => latest.get((item as { id: string }).id) ?? item);
  const known = byId(previous);
  return [...merged, ...fresh.filter((item) => !known.has((item as { id: string }).id))];
};

const main = async () => {
  if (only?.includes('scale')) await runScale();
  if (only?.every((part) => part === 'scale')) return;
  // `--wait-quiet=SECONDS`: start measuring only once the machine is quiet (or after that long).
  const quietWaitSecs = numberOption('wait-quiet');
  if (quietWaitSecs !== undefined) {
    console.error(`bench: waiting up to ${quietWaitSecs} s for a load average under the core count…`);
    console.error(`bench: load average ${await waitForQuiet(quietWaitSecs * 1000)}`);
  }
  const started = performance.now();
  const results: Record<string, unknown> = {
    generatedAt: new Date().toISOString(),
    prices: PRICES,
    machineLoad: { atStart: machineLoad() },
  };
  if (wanted('client')) {
    console.error('bench: client SDK size…');
    results.clientSize = await measureClientSize();
  }
  if (wanted('cold')) {
    console.error("bench: cold starts (bundling with the stack's esbuild options, importing each bundle)…");
    // `--node=PATH`: time the imports with another node, e.g. Node 24 as Lambda runs (docs/performance.md).
    const node = process.argv.find((arg) => arg.startsWith('--node='))?.slice('--node='.length);
    results.coldStarts = await measureColdStarts({ runs: quick ? 3 : 7, node });
  }
  /** `--only=webhook`: scenario (d) alone, replacing its row of the last run (the others stay). */
  const webhookOnly = only?.includes('webhook') && !wanted('cost');
  /** `--only=push-latency`: POST → push at the FCM and APNs stand-ins, without the WebSocket latency rows. */
  const pushLatencyWanted = wanted('latency') || Boolean(only?.includes('push-latency'));
  if (wanted('cost') || webhookOnly || pushLatencyWanted || wanted('load')) {
    // The sweeper (every minute) would run inside measurements: a time scale of 60 makes it hourly.
    process.env.NOTIFY_LOCAL_TIME_SCALE ??= '60';
    // Handlers log at INFO on AWS; here the lines would bury the table (their cost is CloudWatch's, not metered).
    process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
    // Same for the metric lines (CloudWatch EMF); the stack's namespace, so Powertools does not warn.
    process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
    process.env.POWERTOOLS_METRICS_NAMESPACE ??= 'Notify';
    const bench = await startMeteredRuntime();
    try {
      const service = await bench.runtime.mintServiceToken('bench', ['notifications:write']);
      const scenarios: unknown[] = [];
      if (wanted('cost')) {
        console.error('bench: cost scenarios…');
        if (scenarioWanted('a')) scenarios.push(await oneConnectedRecipient(bench, service, quick ? 5 : 20));
        if (scenarioWanted('b')) scenarios.push(await thousandRecipients(bench, service, quick ? 1 : 2));
        if (scenarioWanted('c')) {
          // Enough connections per shard that a sweep's checks run side by side, as they do at scale.
          const hour = await connectedHour(bench, quick ? 5 : 30, quick ? 100 : 320);
          scenarios.push(hour.scenario);
          results.sweeper = hour.sweeper;
        }
        if (scenarioWanted('d')) scenarios.push(await oneWebhookDelivery(bench, quick ? 3 : 10));
        if (scenarioWanted('e')) scenarios.push(await feedPage(bench, service, quick ? 5 : 20));
        if (scenarioWanted('p')) scenarios.push(await pushToOfflineDevices(bench, service, quick ? 5 : 20));
        if (scenarioWanted('g') || scenarioWanted('g2'))
          scenarios.push(...(await digestAgainstSeparate(bench, service, quick ? 1 : 3)));
        if (scenarioWanted('q')) scenarios.push(await heldPush(bench, service, quick ? 5 : 20));
        if (scenarioWanted('r1') || scenarioWanted('r2')) {
          const rows = { fired: scenarioWanted('r1'), cancelled: scenarioWanted('r2') };
          scenarios.push(...(await fallbackSteps(bench, service, quick ? 5 : 20, rows)));
        }
        if (scenarioWanted('i1')) scenarios.push(await stateChange(bench, service, quick ? 5 : 20));
        if (scenarioWanted('i2')) scenarios.push(await countsRead(bench, service, quick ? 5 : 20));
        if (scenarioWanted('i3a') || scenarioWanted('i3b')) {
          const rows = { plain: scenarioWanted('i3a'), categorized: scenarioWanted('i3b') };
          scenarios.push(...(await fanoutWithCategory(bench, service, quick ? 1 : 3, rows)));
        }
        // Last: its 1,200 notifications and 20 connections leave nothing behind for the scenarios above.
        if (scenarioWanted('a2')) {
          scenarios.push(
            await steadyConnectedRecipients(bench, service, {
              perSecond: 20,
              seconds: quick ? 10 : 60,
              users: 20,
            }),
          );
        }
      }
      if (webhookOnly) {
        console.error('bench: cost of one webhook delivery…');
        results.scenarios = mergedScenarios([await oneWebhookDelivery(bench, quick ? 3 : 10)]);
      }
      if (pushLatencyWanted) {
        console.error('bench: push latency (POST → push at the FCM and APNs stand-ins)…');
        const rows = [
          { recipients: 1, notifications: quick ? 10 : 40, providers: ['fcm'] as const },
          { recipients: 1, notifications: quick ? 10 : 40, providers: ['apns'] as const },
          { recipients: 100, notifications: quick ? 2 : 6, providers: ['fcm', 'apns'] as const },
        ];
        const pushLatency = [];
        for (const row of rows) pushLatency.push(await measurePushLatency(bench, service, row));
        results.pushLatency = pushLatency;
      }
      if (wanted('latency')) {
        console.error('bench: opening 1,000 WebSocket connections…');
        const connections = quick ? 100 : 1000;
        const clients = await openClients(bench, connections);
        await bench.settle(60_000);
        console.error('bench: latency…');
        const latency = [];
        latency.push(await measureLatency(bench, service, clients, 1, quick ? 10 : 40));
        latency.push(await measureLatency(bench, service, clients, 100, quick ? 2 : 6));
        latency.push(await measureLatency(bench, service, clients, connections, quick ? 1 : 3));
        if (wanted('cost') && scenarioWanted('b2')) {
          scenarios.push(await thousandConnectedCost(bench, service, clients));
        }
        await Promise.all(clients.map((client) => client.close()));
        console.error('bench: latency through the client SDK…');
        try {
          latency.push(
            ...(await measureSdkLatency(bench, service, [
              { recipients: 1, notifications: quick ? 10 : 40 },
              { recipients: 100, notifications: quick ? 2 : 6 },
            ])),
          );
        } catch (error) {
          // The other figures of the run are kept; the table says the SDK rows are missing.
          console.error('bench: latency through the client SDK failed:', error);
        }
        results.latency = latency;
      }
      if (wanted('load')) {
        // The reliability suite's load run: 50 concurrent clients for 60 s (docs/reliability.md).
        console.error('bench: load (50 concurrent clients)…');
        results.load = await runLoad(bench.runtime, { clients: 50, seconds: quick ? 15 : 60 });
      }
      // Only a run of the cost scenarios replaces them (a load-only run keeps the last ones); with --scenarios,
      // only those it ran.
      if (wanted('cost')) results.scenarios = scenarioIds ? mergedScenarios(scenarios) : scenarios;
    } finally {
      await bench.runtime.stop();
    }
  }
  if (wanted('introspection')) {
    console.error('bench: IdP introspection calls per 1,000 requests of one user…');
    process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
    results.introspection = await measureIntrospectionCost(quick ? 200 : 1000);
  }
  if (wanted('idle')) {
    console.error('bench: idle deployment cost (synthesizing the dev and prod stacks)…');
    // The sweeper's work per run, as measured by the cost scenarios of this run or of the last one.
    const sweeper = (results.sweeper ?? previousResults().sweeper) as
      | { perRunFixed?: ServiceUnits }
      | undefined;
    results.idleCost = ['dev', 'prod'].map((stage) => idleCost(stage, sweeper?.perRunFixed));
  }
  results.benchSeconds = (performance.now() - started) / 1000;
  results.machineLoad = { ...(results.machineLoad as object), atEnd: machineLoad() };
  printResults(results);
  // A partial run (--only) replaces its own sections and keeps the others of the last run.
  writeFormatted(RESULTS_FILE, { ...(only ? previousResults() : {}), ...results });
};

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
