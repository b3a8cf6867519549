/**
 * The capacity knobs of a stage (`scale` in config/<stage>.json, docs/scale.md) reach the template: event-source
 * batch size and maximum concurrency, reserved concurrency, the connection shard count; and the capacity alarms
 * fire at the stage's share of the quotas it is sized for.
 */
import type { CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { envNames, wiring } from '../../lib/wiring';
import { prodSettings, type SynthesizedStack, synthesize } from './synth';

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

const SCALE = {
  quotas: { lambda_concurrency: 3000, api_gateway_rps: 80_000, websocket_new_connections_per_sec: 2000 },
  alarm_percent: 75,
  queue_age_alarm_secs: 900,
  connection_shards: 64,
  presence: { announce_max: 500, summary_secs: 60 },
  webhook_delivery_shards: 8,
  workers: { 'webhooks.deliver': { batch_size: 1, max_concurrency: 50, reserved_concurrency: 60 } },
};

describe('stage scale settings in the template', () => {
  let synth: SynthesizedStack;
  let resources: Resources;
  let alarms: { Threshold: number; AlarmDescription: string; MetricName?: string }[];
  const functionId = (key: string) => {
    const fn = synth.stack.functions.get(key);
    if (!fn) throw new Error(`no function ${key}`);
    return synth.stack.getLogicalId(fn.function.node.defaultChild as CfnElement);
  };
  const alarmsAbout = (text: string) => alarms.filter((alarm) => alarm.AlarmDescription.includes(text));

  beforeAll(() => {
    synth = synthesize(prodSettings({ scale: SCALE }));
    resources = synth.template.toJSON().Resources as Resources;
    const nested = Template.fromStack(synth.stack.monitoring.nestedStack).toJSON().Resources as Resources;
    alarms = Object.values(nested)
      .filter((resource) => resource.Type === 'AWS::CloudWatch::Alarm')
      .map(
        (resource) =>
          resource.Properties as { Threshold: number; AlarmDescription: string; MetricName?: string },
      );
  });

  it('overrides the declared batch size and maximum concurrency of the named worker only', () => {
    for (const worker of wiring.workers) {
      const tuned = worker.id === 'webhooks.deliver';
      const maxConcurrency = tuned ? 50 : worker.maxConcurrency;
      synth.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        FunctionName: { Ref: functionId(`worker:${worker.id}`) },
        BatchSize: tuned ? 1 : worker.batchSize,
        ScalingConfig: maxConcurrency === undefined ? Match.absent() : { MaximumConcurrency: maxConcurrency },
      });
    }
  });

  it('reserves concurrency for the named worker and for nothing else', () => {
    const reserved = Object.entries(resources)
      .filter(([, resource]) => resource.Properties?.ReservedConcurrentExecutions !== undefined)
      .map(([id, resource]) => [id, resource.Properties.ReservedConcurrentExecutions]);
    expect(reserved).toEqual([[functionId('worker:webhooks.deliver'), 60]]);
  });

  it.each([
    ['the connections table', 'wsConnections', envNames.connectionShards, '64'],
    ['the webhook deliveries', 'webhookDeliveries', envNames.webhookDeliveryShards, '8'],
  ])('tells every function that touches %s its shard count, and no other', (_, table, variable, count) => {
    for (const key of synth.stack.functions.keys()) {
      const environment = resources[functionId(key)]?.Properties.Environment as
        | { Variables: Record<string, unknown> }
        | undefined;
      const variables = environment?.Variables ?? {};
      const touches = variables[envNames.tableName(table)] !== undefined;
      expect(variables[variable], key).toBe(touches ? count : undefined);
    }
  });

  it('tells every function that writes presence when rooms get summaries, and that it may queue them', () => {
    const writers = [...wiring.httpRoutes, ...wiring.webSocketRoutes, ...wiring.workers].filter((fn) =>
      fn.writes?.includes('presence'),
    );
    expect(writers.length).toBeGreaterThan(5);
    // A presence change in a large room arms its summary on the broadcast queue (docs/realtime.md).
    for (const fn of writers) expect(fn.sendsTo, fn.handler).toContain('broadcast');
    for (const key of synth.stack.functions.keys()) {
      const environment = resources[functionId(key)]?.Properties.Environment as
        | { Variables: Record<string, unknown> }
        | undefined;
      const variables = environment?.Variables ?? {};
      const writes =
        variables[envNames.tableName('presence')] !== undefined && !key.startsWith('http:presence.');
      expect(variables[envNames.presenceAnnounceMax], key).toBe(writes ? '500' : undefined);
      expect(variables[envNames.presenceSummarySecs], key).toBe(writes ? '60' : undefined);
    }
  });

  it('alarms at the stage’s share of each quota, on every queue’s backlog and every table’s throughput', () => {
    expect(alarmsAbout('Lambda concurrent executions of the account').map((a) => a.Threshold)).toEqual([
      2250,
    ]);
    expect(alarmsAbout('account throttle of 80000/s').map((a) => a.Threshold)).toEqual([60_000]);
    expect(alarmsAbout('New WebSocket connections').map((a) => a.Threshold)).toEqual([1500]);
    const ages = alarmsAbout('The oldest message of');
    expect(ages).toHaveLength(wiring.queues.length);
    for (const alarm of ages) expect(alarm.Threshold).toBe(900);
    // The backlog of the bus functions and of the workers invoked asynchronously is in Lambda's asynchronous
    // queue: AsyncEventAge, in milliseconds.
    const invokedAsync =
      (wiring.busFunctions?.length ?? 0) + wiring.workers.filter((w) => w.invokedAsync).length;
    const asyncAges = alarmsAbout("in Lambda's asynchronous queue of");
    expect(asyncAges).toHaveLength(invokedAsync);
    expect(asyncAges.length).toBeGreaterThan(0);
    for (const alarm of asyncAges) {
      expect(alarm.MetricName).toBe('AsyncEventAge');
      expect(alarm.Threshold).toBe(900_000);
    }
    expect(alarmsAbout('could not write their failure record')).toHaveLength(invokedAsync);
    // The shard sweep must end within the 20 s between sweeps: 75 % of it (a shard too large for one invocation).
    expect(alarmsAbout('An invocation of worker:ws.sweepShard ran').map((a) => a.Threshold)).toEqual([
      15_000,
    ]);
    expect(alarmsAbout('busyAfterSecs')).toHaveLength(wiring.workers.filter((w) => w.busyAfterSecs).length);
    const tables = alarmsAbout('scale.quotas.dynamodb_table_units');
    expect(tables).toHaveLength(wiring.tables.length);
    for (const alarm of tables) expect(alarm.Threshold).toBe(75);
  });

  it('alarms on the throttles of the worker with reserved concurrency, which can be throttled alone', () => {
    const errorAlarms = alarmsAbout('Function worker:');
    expect(errorAlarms.length).toBe(wiring.workers.length);
    const withThrottles = errorAlarms.filter((alarm) => alarm.AlarmDescription.includes('throttled'));
    expect(withThrottles.map((alarm) => alarm.AlarmDescription)).toEqual([
      expect.stringContaining('worker:webhooks.deliver'),
    ]);
    const [alarm] = withThrottles as unknown as { Metrics: { Expression?: string }[] }[];
    expect(alarm?.Metrics.map((metric) => metric.Expression).filter(Boolean)).toEqual(['errors + throttles']);
  });

  it('refuses overrides for a worker the wiring does not declare', () => {
    expect(() =>
      synthesize(prodSettings({ scale: { workers: { 'webhooks.delivr': { batch_size: 2 } } } })),
    ).toThrow(/scale.workers names webhooks.delivr, which no worker of lib\/wiring is/);
  });
});
