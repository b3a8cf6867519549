/**
 * What a platform team needs to run a stage: alarms on every DLQ, function and API error rate and on the
 * webhook failure rate, where they go, a dashboard, log retention everywhere, throttling on both APIs,
 * tracing as configured, data kept in production, and the outputs the README uses. One synth per stage kind.
 * Alarms, topic and dashboard live in the monitoring nested stack: they are asserted on its template, and what
 * they watch through the parameters the parent passes it.
 */
import { isDeepStrictEqual } from 'node:util';
import type { CfnElement } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { SERVICE_METRICS } from '../../common/metric-names';
import { ALARM_THRESHOLDS } from '../../lib/constructs/monitoring';
import { DEFAULT_ROUTE_PATH, wiring } from '../../lib/wiring';
import { devSettings, prodSettings, type SynthesizedStack, synthesize } from './synth';

type Resources = Record<
  string,
  { Type: string; Properties: Record<string, unknown>; DeletionPolicy?: string }
>;

const logicalIdOf = (synth: SynthesizedStack, construct: { node: { defaultChild?: unknown } }) =>
  synth.stack.getLogicalId(construct.node.defaultChild as CfnElement);

/** CloudFormation's limit of parameters of one template (the budgets of every template: stack.test.ts). */
const TEMPLATE_PARAMETER_LIMIT = 200;

/** The monitoring nested stack of a synthesized stack, and how the parent's values reach it. */
interface MonitoringStack {
  readonly template: Template;
  readonly resources: Resources;
  /** The nested stack resource of the parent template. */
  readonly resourceId: string;
  /** `{ Ref: <parameter> }` inside the nested template for a value of the parent (a function name, ...). */
  readonly passed: (parentValue: unknown) => { Ref: string };
  readonly logicalIdOf: (construct: { node: { defaultChild?: unknown } }) => string;
}

const monitoringStackOf = (synth: SynthesizedStack): MonitoringStack => {
  const nestedStack = synth.stack.monitoring.nestedStack;
  const template = Template.fromStack(nestedStack);
  const resource = nestedStack.nestedStackResource;
  if (!resource) throw new Error('the monitoring stack is not nested');
  const resourceId = synth.stack.getLogicalId(resource);
  const parentResources = synth.template.toJSON().Resources as Resources;
  const parameters = (parentResources[resourceId]?.Properties.Parameters ?? {}) as Record<string, unknown>;
  return {
    template,
    resources: template.toJSON().Resources as Resources,
    resourceId,
    passed: (parentValue) => {
      const names = Object.entries(parameters)
        .filter(([, value]) => isDeepStrictEqual(value, parentValue))
        .map(([name]) => name);
      expect(names, `one parameter of the nested stack is ${JSON.stringify(parentValue)}`).toHaveLength(1);
      return { Ref: names[0] as string };
    },
    logicalIdOf: (construct) => nestedStack.getLogicalId(construct.node.defaultChild as CfnElement),
  };
};

/** One alarm per dead-letter queue, on any message waiting in it: every monitoring level has them. */
const expectDeadLetterAlarms = (synth: SynthesizedStack, monitoring: MonitoringStack) => {
  expect(wiring.queues.length).toBeGreaterThan(0);
  const deadLetterQueues = [
    ...synth.stack.queues.all.map(({ spec, deadLetterQueue }) => ({ id: spec.id, deadLetterQueue })),
    // The bus functions' on-failure destinations.
    ...synth.stack.queues.failureDestinations,
  ];
  expect(synth.stack.queues.failureDestinations.length).toBe(
    new Set((wiring.busFunctions ?? []).map((fn) => fn.deadLetterQueue)).size,
  );
  for (const { id: queueId, deadLetterQueue } of deadLetterQueues) {
    monitoring.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [
        {
          Name: 'QueueName',
          Value: monitoring.passed({ 'Fn::GetAtt': [logicalIdOf(synth, deadLetterQueue), 'QueueName'] }),
        },
      ],
      Statistic: 'Maximum',
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      TreatMissingData: 'notBreaching',
      AlarmDescription: Match.stringLikeRegexp(`"${queueId}"`),
    });
  }
};

/** The bus functions' on-failure destinations: one DLQ alarm each, and no backlog alarm (no source queue). */
const failureDlqs = () => new Set((wiring.busFunctions ?? []).map((fn) => fn.deadLetterQueue)).size;

/** Workers whose invocations must fit a declared time (one duration alarm each). */
const busyWorkers = () => wiring.workers.filter((worker) => worker.busyAfterSecs !== undefined).length;

/**
 * The alarms of the `full` level: per queue, DLQ and backlog; per on-failure DLQ; per function; per table,
 * throughput; HTTP 5xx, WebSocket, webhooks; account concurrency, API Gateway throttle, new connections
 * (docs/scale.md); account throttles; per worker declaring busyAfterSecs, its duration.
 */
/**
 * Each asynchronously invoked function's queue at Lambda (the bus functions, the workers declaring `invokedAsync`):
 * its age, and events dropped or failure records not written.
 */
const busQueueAlarms = () =>
  2 * ((wiring.busFunctions?.length ?? 0) + wiring.workers.filter((worker) => worker.invokedAsync).length);
const fullAlarmCount = (functions: number) =>
  2 * wiring.queues.length +
  failureDlqs() +
  functions +
  wiring.tables.length +
  3 +
  3 +
  1 +
  busyWorkers() +
  busQueueAlarms();

describe('production-like stage (project declaration)', () => {
  let synth: SynthesizedStack;
  let resources: Resources;
  let monitoring: MonitoringStack;
  beforeAll(() => {
    synth = synthesize(prodSettings());
    resources = synth.template.toJSON().Resources as Resources;
    monitoring = monitoringStackOf(synth);
  });

  it('keeps alarms, topic and dashboard in a nested stack of their own', () => {
    const parentResources = synth.parentTemplate.toJSON().Resources as Resources;
    const nestedStacks = Object.entries(parentResources)
      .filter(([, resource]) => resource.Type === 'AWS::CloudFormation::Stack')
      .map(([id]) => id);
    expect(nestedStacks).toContain(monitoring.resourceId);
    for (const type of ['AWS::CloudWatch::Alarm', 'AWS::CloudWatch::Dashboard', 'AWS::SNS::Topic'])
      synth.template.resourceCountIs(type, 0);
    const nested = monitoring.template.toJSON() as { Parameters?: Record<string, unknown> };
    const parameterCount = Object.keys(nested.Parameters ?? {}).length;
    // One parameter per function, DLQ and API the alarms watch; the parent passes each one.
    expect(Object.keys(resources[monitoring.resourceId]?.Properties.Parameters ?? {}).length).toBe(
      parameterCount,
    );
    expect(
      parameterCount,
      `the monitoring nested template takes ${parameterCount} parameters: CloudFormation refuses more than ` +
        `${TEMPLATE_PARAMETER_LIMIT} in one template (one per watched function, DLQ and API)`,
    ).toBeLessThan(TEMPLATE_PARAMETER_LIMIT);
  });

  it('alarms when any message waits in any dead-letter queue', () => {
    expectDeadLetterAlarms(synth, monitoring);
  });

  it('alarms on errors of every function, and on throttles of the whole account', () => {
    for (const [key, fn] of synth.stack.functions) {
      const functionRef = monitoring.passed({ Ref: logicalIdOf(synth, fn.function) });
      // No reserved concurrency in these settings: a function is throttled only when the account is.
      monitoring.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/Lambda',
        MetricName: 'Errors',
        Dimensions: [{ Name: 'FunctionName', Value: functionRef }],
        Statistic: 'Sum',
        Period: 300,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        AlarmDescription: Match.stringLikeRegexp(key.replace(/[$.]/g, '\\$&')),
      });
    }
    monitoring.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/Lambda',
      MetricName: 'Throttles',
      Dimensions: Match.absent(),
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('alarms on the HTTP API 5xx rate and on WebSocket API errors', () => {
    const httpApi = synth.stack.httpApi;
    const webSocketApi = synth.stack.webSocketApi;
    if (!httpApi || !webSocketApi) throw new Error('both APIs are declared');
    monitoring.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Threshold: ALARM_THRESHOLDS.http5xxPercent,
      ComparisonOperator: 'GreaterThanThreshold',
      Metrics: Match.arrayWith([
        Match.objectLike({
          Expression: `IF(requests >= ${ALARM_THRESHOLDS.http5xxMinRequests}, 100 * errors / requests, 0)`,
        }),
        Match.objectLike({
          Id: 'errors',
          MetricStat: Match.objectLike({
            Metric: {
              Namespace: 'AWS/ApiGateway',
              MetricName: '5xx',
              Dimensions: [
                { Name: 'ApiId', Value: monitoring.passed({ Ref: logicalIdOf(synth, httpApi.api) }) },
              ],
            },
          }),
        }),
      ]),
    });
    monitoring.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Threshold: ALARM_THRESHOLDS.webSocketErrors,
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: 'execution + integration' }),
        Match.objectLike({
          Id: 'execution',
          MetricStat: Match.objectLike({
            Metric: {
              Namespace: 'AWS/ApiGateway',
              MetricName: 'ExecutionError',
              Dimensions: Match.arrayWith([
                { Name: 'ApiId', Value: monitoring.passed({ Ref: logicalIdOf(synth, webSocketApi.api) }) },
                { Name: 'Stage', Value: Match.anyValue() },
              ]),
            },
          }),
        }),
      ]),
    });
  });

  it('alarms on the webhook failure rate from the service’s own EMF counters of this stage', () => {
    const counter = (name: string) =>
      Match.objectLike({
        MetricStat: Match.objectLike({
          Metric: {
            Namespace: 'Notify',
            MetricName: name,
            Dimensions: Match.arrayWith([
              { Name: 'service', Value: 'notify' },
              { Name: 'stage', Value: prodSettings().stage },
            ]),
          },
          Stat: 'Sum',
        }),
      });
    monitoring.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Threshold: ALARM_THRESHOLDS.webhookFailurePercent,
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: Match.stringLikeRegexp('100 \\* failed / \\(ok \\+ failed\\)') }),
        counter(SERVICE_METRICS.webhookDeliveries),
        counter(SERVICE_METRICS.webhookDeliveryFailures),
      ]),
    });
  });

  it('sends every alarm and its recovery to the stack’s encrypted, TLS-only e-mail topic and to the existing topic', () => {
    const topic = synth.stack.monitoring.topic;
    if (!topic) throw new Error('an alarm topic is configured');
    const topicId = monitoring.logicalIdOf(topic);
    const existing = prodSettings().alarms.topicArn;
    monitoring.template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: prodSettings().alarms.email,
      TopicArn: { Ref: topicId },
    });
    monitoring.template.hasResourceProperties('AWS::SNS::Topic', {
      KmsMasterKeyId: { 'Fn::GetAtt': [Match.anyValue(), 'Arn'] },
    });
    monitoring.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [{ Ref: topicId }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
    // CloudWatch may use the topic's key (the AWS managed SNS key cannot be granted to it).
    monitoring.template.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          }),
        ]),
      },
    });
    const alarms = Object.values(monitoring.resources).filter(
      (resource) => resource.Type === 'AWS::CloudWatch::Alarm',
    );
    expect(alarms.length).toBe(fullAlarmCount(synth.stack.functions.size));
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: topicId }, existing]);
      expect(alarm.Properties.OKActions).toEqual([{ Ref: topicId }, existing]);
    }
  });

  it('has a dashboard with the service counters, the DLQs, the APIs, the functions and the alarms', () => {
    const dashboards = Object.values(monitoring.resources).filter(
      (resource) => resource.Type === 'AWS::CloudWatch::Dashboard',
    );
    expect(dashboards).toHaveLength(1);
    const [dashboard] = dashboards;
    // Not the name it had in the parent stack (an upgrade would create the new one before deleting the old).
    expect(dashboard?.Properties.DashboardName).toEqual({
      'Fn::Join': ['', ['notify-prodtest-', { Ref: 'AWS::Region' }, '-monitoring']],
    });
    const body = JSON.stringify(dashboard?.Properties.DashboardBody);
    for (const name of Object.values(SERVICE_METRICS)) expect(body).toContain(name);
    for (const title of [
      'Dead-letter queues',
      'HTTP API requests',
      'WebSocket API',
      'Function errors',
      'Function throttles',
      'Alarms',
    ])
      expect(body).toContain(title);
  });

  it('keeps a retention on every log group, and retains them with the data', () => {
    const logGroups = Object.entries(resources).filter(
      ([, resource]) => resource.Type === 'AWS::Logs::LogGroup',
    );
    // One per function plus the two APIs' access logs.
    expect(logGroups.length).toBe(synth.stack.functions.size + 2);
    for (const [id, logGroup] of logGroups) {
      expect(logGroup.Properties.RetentionInDays, id).toBe(prodSettings().logRetentionDays);
      expect(logGroup.DeletionPolicy, id).toBe('Retain');
    }
    // No function writes to a log group the stack does not manage (Lambda's implicit /aws/lambda/<name>).
    synth.template.resourcePropertiesCountIs(
      'AWS::Lambda::Function',
      { LoggingConfig: { LogGroup: Match.anyValue() } },
      synth.stack.functions.size,
    );
  });

  it('keeps tables on stack deletion, with deletion protection, point-in-time recovery and KMS encryption', () => {
    synth.template.allResources('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: Match.objectLike({
        DeletionProtectionEnabled: true,
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        // SSEEnabled = the AWS managed KMS key (aws/dynamodb), not the AWS owned default.
        SSESpecification: { SSEEnabled: true },
      }),
    });
  });

  it('throttles both API stages with the stage’s limits', () => {
    const { http, webSocket } = prodSettings().throttling;
    synth.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      DefaultRouteSettings: { ThrottlingRateLimit: http.rateLimit, ThrottlingBurstLimit: http.burstLimit },
    });
    synth.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: 'ws',
      DefaultRouteSettings: {
        ThrottlingRateLimit: webSocket.rateLimit,
        ThrottlingBurstLimit: webSocket.burstLimit,
      },
    });
  });

  it('answers unmatched requests with the declared $default route’s function', () => {
    const fallback = wiring.httpRoutes.find((route) => route.path === DEFAULT_ROUTE_PATH);
    if (!fallback) throw new Error('no $default route declared');
    expect(fallback.method).toBe('ANY');
    const fn = synth.stack.functions.get(`http:${fallback.id}`);
    if (!fn) throw new Error('no fallback function');
    const [integrationId] = Object.keys(
      synth.template.findResources('AWS::ApiGatewayV2::Integration', {
        Properties: { IntegrationUri: { 'Fn::GetAtt': [logicalIdOf(synth, fn.function), 'Arn'] } },
      }),
    );
    synth.template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
      RouteKey: '$default',
      Target: { 'Fn::Join': ['', ['integrations/', { Ref: integrationId }]] },
    });
  });

  it('emits EMF metrics under the Notify namespace and traces actively when tracing is on', () => {
    synth.template.allResourcesProperties('AWS::Lambda::Function', {
      TracingConfig: { Mode: 'Active' },
      Environment: {
        Variables: Match.objectLike({
          POWERTOOLS_METRICS_NAMESPACE: 'Notify',
          POWERTOOLS_SERVICE_NAME: 'notify',
          NOTIFY_STAGE: prodSettings().stage,
        }),
      },
    });
  });

  it('outputs the HTTP API URL, the WebSocket URL, the bus name and the alarm topic', () => {
    const outputs = synth.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    const httpApi = synth.stack.httpApi;
    if (!httpApi) throw new Error('no HTTP API');
    expect(JSON.stringify(outputs.HttpApiUrl?.Value)).toContain(logicalIdOf(synth, httpApi.api));
    expect(JSON.stringify(outputs.HttpApiUrl?.Value)).toMatch(/api\/v1"?\]*\}?$/);
    expect(JSON.stringify(outputs.WebSocketUrl?.Value)).toMatch(/^\{"Fn::Join":\["",\["wss:\/\//);
    expect(JSON.stringify(outputs.WebSocketUrl?.Value)).toContain('/ws');
    expect(outputs.EventBusName?.Value).toEqual({ Ref: logicalIdOf(synth, synth.stack.eventBus.bus) });
    // The topic is in the nested stack: the parent reads it from an output of that stack.
    const nestedOutputs = monitoring.template.toJSON().Outputs as Record<string, { Value: unknown }>;
    const [topicOutput] = Object.entries(nestedOutputs).filter(([, output]) =>
      isDeepStrictEqual(output.Value, { Ref: monitoring.logicalIdOf(synth.stack.monitoring.topic as never) }),
    );
    if (!topicOutput) throw new Error('the nested stack does not output the alarm topic');
    expect(outputs.AlarmTopicArn?.Value).toEqual({
      'Fn::GetAtt': [monitoring.resourceId, `Outputs.${topicOutput[0]}`],
    });
    expect(outputs.Hs256SecretArn).toBeUndefined();
  });
});

describe('development stage with tracing off and no alarm destination', () => {
  let synth: SynthesizedStack;
  beforeAll(() => {
    const settings = devSettings();
    synth = synthesize({ ...settings, tracing: false });
  });

  it('passes traces through instead of sampling, and keeps the X-Ray grant that needs', () => {
    synth.template.allResourcesProperties('AWS::Lambda::Function', {
      TracingConfig: { Mode: 'PassThrough' },
    });
    synth.template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Resource: '*' }),
        ]),
      },
    });
  });

  it('alarms on what matters — any dead letter, any Lambda error or throttle — within the 10 free alarm metrics, with no action, topic or dashboard', () => {
    const monitoring = monitoringStackOf(synth);
    expect(synth.stack.monitoring.alarms.length).toBe(wiring.queues.length + failureDlqs() + 1);
    monitoring.template.resourceCountIs('AWS::CloudWatch::Alarm', wiring.queues.length + failureDlqs() + 1);
    expectDeadLetterAlarms(synth, monitoring);
    const accountMetric = (name: string) =>
      Match.objectLike({
        Id: name.toLowerCase(),
        MetricStat: Match.objectLike({ Metric: { Namespace: 'AWS/Lambda', MetricName: name }, Stat: 'Sum' }),
      });
    monitoring.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Metrics: Match.arrayWith([
        Match.objectLike({ Expression: 'errors + throttles' }),
        accountMetric('Errors'),
        accountMetric('Throttles'),
      ]),
    });
    // Billed per metric evaluated; CloudWatch's free tier covers 10 alarm metrics an account.
    const metrics = Object.values(monitoring.template.findResources('AWS::CloudWatch::Alarm')).reduce(
      (total, alarm) => {
        const math = (alarm.Properties.Metrics ?? []) as { MetricStat?: unknown }[];
        return total + (math.length > 0 ? math.filter((metric) => metric.MetricStat).length : 1);
      },
      0,
    );
    expect(metrics).toBeLessThanOrEqual(10);
    synth.template.resourceCountIs('AWS::SNS::Topic', 0);
    monitoring.template.resourceCountIs('AWS::SNS::Topic', 0);
    monitoring.template.resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    monitoring.template.allResourcesProperties('AWS::CloudWatch::Alarm', {
      AlarmActions: Match.absent(),
      OKActions: Match.absent(),
    });
  });

  it('gets the full alarm set and the dashboard when its stage file asks for `monitoring: "full"`', () => {
    const full = synthesize({ ...devSettings(), tracing: false, monitoring: 'full' });
    const template = Template.fromStack(full.stack.monitoring.nestedStack);
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    template.resourceCountIs('AWS::CloudWatch::Alarm', fullAlarmCount(full.stack.functions.size));
  });

  it('deletes tables with the stack and does not protect them', () => {
    synth.template.allResources('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Delete',
      Properties: Match.objectLike({ DeletionProtectionEnabled: false }),
    });
  });

  it('uses the development throttling limits', () => {
    const { http } = devSettings().throttling;
    synth.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      DefaultRouteSettings: { ThrottlingRateLimit: http.rateLimit, ThrottlingBurstLimit: http.burstLimit },
    });
  });
});
