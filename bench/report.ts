import type { ClientSizeRow } from './client-size';
import { type ColdStartReport, describeGoal } from './cold-start';
import type { ServiceUnits } from './cost';
import type { IdleCost } from './idle-cost';
import type { IntrospectionCost } from './introspection';
import type { LatencyResult } from './latency';
import type { LoadResult } from './load';
import { PRICES } from './prices';
import type { PushLatencyResult } from './push-scenarios';
import type { ScenarioResult, SkippedScenario } from './scenarios';

/** The columns every latency table shares, after its first: what arrived, and the times from the POST. */
const timingHeaders = (arrivals: string, last: string): string[] => [
  'recipients',
  'notifications',
  arrivals,
  'p50 ms',
  'p99 ms',
  'max ms',
  `${last} p50 ms`,
];

const timingCells = (
  row: {
    readonly recipients: number;
    readonly notifications: number;
    readonly p50Ms: number;
    readonly p99Ms: number;
    readonly maxMs: number;
  },
  arrivals: number,
  lastP50Ms: number,
): string[] => [
  String(row.recipients),
  String(row.notifications),
  String(arrivals),
  row.p50Ms.toFixed(0),
  row.p99Ms.toFixed(0),
  row.maxMs.toFixed(0),
  lastP50Ms.toFixed(0),
];

const table = (headers: readonly string[], rows: readonly (readonly string[])[]): string => {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) =>
        column === 0 ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0),
      )
      .join('  ');
  return [line(headers), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(line)].join('\n');
};

/** Up to 3 significant digits, without exponent noise for small counts. */
const n = (value: number): string => {
  if (value === 0) return '0';
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 1) return value.toFixed(2).replace(/\.?0+$/, '');
  return value.toPrecision(2);
};
const usd = (value: number): string => `$${value >= 100 ? value.toFixed(0) : value.toFixed(2)}`;

const isSkipped = (scenario: ScenarioResult | SkippedScenario): scenario is SkippedScenario =>
  'skipped' in scenario;

const unitColumns: readonly [keyof ServiceUnits, string][] = [
  ['httpApiRequests', 'HTTP'],
  ['wsMessages', 'WS msg'],
  ['wsConnectionMinutes', 'WS min'],
  ['lambdaInvocations', 'λ inv'],
  ['lambdaGbSeconds', 'λ GB-s'],
  ['dynamoDbRequests', 'DDB req'],
  ['dynamoDbReadUnits', 'RRU'],
  ['dynamoDbWriteUnits', 'WRU'],
  ['sqsRequests', 'SQS'],
  ['eventBridgeEvents', 'EB'],
  ['schedulerInvocations', 'Sched'],
];

export const printResults = (results: Record<string, unknown>): void => {
  const out: string[] = [];
  const scenarios = (results.scenarios ?? []) as (ScenarioResult | SkippedScenario)[];
  if (scenarios.length) {
    out.push(
      `\nCost per operation (billable units, measured on the local runtime; prices us-east-1 as of ${PRICES.asOf})\n`,
    );
    const measured = scenarios.filter((scenario): scenario is ScenarioResult => !isSkipped(scenario));
    out.push(
      table(
        ['scenario', 'per', ...unitColumns.map(([, label]) => label)],
        measured.map((scenario) => [
          scenario.id,
          scenario.operation,
          ...unitColumns.map(([key]) => n(scenario.unitsPerOperation[key])),
        ]),
      ),
    );
    out.push('\nDollars per million operations\n');
    out.push(
      table(
        ['scenario', 'API GW', 'Lambda', 'DynamoDB', 'SQS', 'EventBridge', 'Scheduler', 'total', 'what'],
        measured.map((scenario) => {
          const d = scenario.dollarsPerMillion;
          return [
            scenario.id,
            usd(d.apiGateway),
            usd(d.lambda),
            usd(d.dynamoDb),
            usd(d.sqs),
            usd(d.eventBridge),
            usd(d.scheduler),
            usd(d.total),
            scenario.title,
          ];
        }),
      ),
    );
    for (const scenario of scenarios) {
      if (isSkipped(scenario))
        out.push(`(${scenario.id}) ${scenario.title}: not measured — ${scenario.skipped}`);
      else for (const note of scenario.notes ?? []) out.push(`(${scenario.id}) ${note}`);
    }
  }
  const cold = results.coldStarts as ColdStartReport | undefined;
  if (cold) {
    out.push(
      `\nCold start: bundle size and init (import in a fresh node ${cold.nodeVersion}, median of ${cold.runs}, minus bare node ${cold.bareNodeMs.toFixed(0)} ms)\n`,
    );
    // Floor: an empty handler importing only the same SDK clients, jose and logger, built and timed the same way.
    const sorted = [...cold.functions].sort((a, b) => b.bundleKiB - a.bundleKiB);
    const shown = (verdict: string | undefined) =>
      verdict === 'met' ? 'ok' : verdict === 'floor' ? 'ok (floor)' : verdict === 'over' ? 'OVER' : '—';
    out.push(
      table(
        [
          'function',
          'KiB',
          'floor KiB',
          'size',
          'init ms',
          'floor ms',
          'init',
          'import ms',
          'MB',
          'above floor KiB: zod, own code, libraries',
          'largest inputs (KiB)',
        ],
        sorted.map((fn) => [
          fn.functionId,
          fn.bundleKiB.toFixed(0),
          fn.floor ? fn.floor.bundleKiB.toFixed(0) : '—',
          shown(fn.goal?.bundle),
          fn.initMs.toFixed(0),
          fn.floor ? fn.floor.initMs.toFixed(0) : '—',
          shown(fn.goal?.init),
          fn.importMs.toFixed(0),
          String(fn.memoryMb),
          fn.aboveFloor
            ? `${fn.aboveFloor.zod.toFixed(1)}, ${fn.aboveFloor.ownCode.toFixed(1)}, ${fn.aboveFloor.libraries.toFixed(1)}`
            : '—',
          fn.largestInputs
            .slice(0, 3)
            .map((input) => `${input.name} ${input.kib.toFixed(0)}`)
            .join(', '),
        ]),
      ),
    );
    if (cold.goal) {
      const within = (part: 'bundle' | 'init') =>
        cold.functions.filter((fn) => fn.goal?.[part] !== 'over').length;
      out.push(
        `Bundle goal: ${describeGoal(cold.goal)} ("ok (floor)"). Within it: size ${within('bundle')} of ` +
          `${cold.functions.length}, init ${within('init')} of ${cold.functions.length}.`,
      );
    }
  }
  const latency = results.latency as LatencyResult[] | undefined;
  if (latency) {
    out.push('\nLatency: POST /notifications → notification frame on the client (local runtime, 2 cores)\n');
    out.push(
      table(
        ['via', ...timingHeaders('frames', 'last frame')],
        latency.map((row) => [
          row.via ?? 'bench client',
          ...timingCells(row, row.frames, row.lastFrameP50Ms),
        ]),
      ),
    );
  }
  const pushLatency = results.pushLatency as PushLatencyResult[] | undefined;
  if (pushLatency) {
    out.push(
      '\nPush latency: POST /notifications → push at the provider stand-in (local runtime, 2 cores)\n',
    );
    out.push(
      table(
        ['devices', ...timingHeaders('pushes', 'last push')],
        pushLatency.map((row) => [
          row.providers.join('+'),
          ...timingCells(row, row.pushes, row.lastPushP50Ms),
        ]),
      ),
    );
  }
  const clientSize = results.clientSize as ClientSizeRow[] | undefined;
  if (clientSize) {
    out.push('\nClient SDK (client/): what an app ships, esbuild-minified, gzip -9\n');
    out.push(
      table(
        ['part', 'exports', 'min KiB', 'gzip KiB', 'budget KiB'],
        clientSize.map((row) => [
          row.part,
          row.exports,
          (row.minifiedBytes / 1024).toFixed(1),
          (row.gzippedBytes / 1024).toFixed(1),
          row.budgetBytes === undefined ? '' : (row.budgetBytes / 1024).toFixed(0),
        ]),
      ),
    );
  }
  const load = results.load as LoadResult | undefined;
  if (load) {
    out.push(
      `\nLoad: ${load.clients} concurrent clients for ${load.seconds} s — ${load.requests} requests, ` +
        `${load.errors} errors, ${load.accepted} notifications accepted, ${load.lostFeedItems} feed items and ` +
        `${load.lostFrames} frames lost\n`,
    );
    out.push(
      table(
        ['request', 'count', 'p50 ms', 'p99 ms'],
        load.perRequest.map((row) => [
          row.request,
          String(row.count),
          row.p50Ms.toFixed(0),
          row.p99Ms.toFixed(0),
        ]),
      ),
    );
    for (const sample of load.errorSamples) out.push(`  error: ${sample}`);
  }
  const introspection = results.introspection as IntrospectionCost | undefined;
  if (introspection) {
    out.push(
      `\nOpaque tokens: IdP introspection calls per 1,000 requests of one user (cache ${introspection.cacheTtlSecs} s)\n`,
    );
    out.push(
      table(
        ['token', 'requests', 'IdP calls', 'per 1,000', 'ms/request', 'λ ms/request'],
        introspection.rows.map((row) => [
          row.token,
          String(row.requests),
          String(row.idpCalls),
          n(row.idpCallsPer1000Requests),
          row.meanRequestMs.toFixed(1),
          row.meanFunctionMs.toFixed(1),
        ]),
      ),
    );
  }
  const idle = results.idleCost as IdleCost[] | undefined;
  if (idle) {
    out.push('\nIdle deployment cost per month (synthesized templates; nobody using the service)\n');
    const items = [...new Set(idle.flatMap((stage) => stage.lines.map((line) => line.item)))];
    const cell = (stage: IdleCost, item: string) => {
      const line = stage.lines.find((candidate) => candidate.item === item);
      return line ? `${line.count}: ${usd(line.dollarsPerMonth)}` : '—';
    };
    out.push(
      table(
        ['item', ...idle.map((stage) => stage.stage)],
        [
          ...items.map((item) => [item, ...idle.map((stage) => cell(stage, item))]),
          ['total per month', ...idle.map((stage) => usd(stage.dollarsPerMonth))],
        ],
      ),
    );
  }
  out.push(`\nbench took ${(results.benchSeconds as number).toFixed(0)} s; figures in bench/results.json\n`);
  console.log(out.join('\n'));
};
