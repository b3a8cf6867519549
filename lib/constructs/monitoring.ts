import { Duration, NestedStack, type RemovalPolicy } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { SERVICE_METRICS } from '../../common/metric-names';
import type { MonitoringLevel, ScaleSettings } from '../config/stage-config';
import { silenceCfnLint } from '../nag-suppressions';
import type { ServiceHttpApi, ServiceWebSocketApi } from './apis';
import { METRICS_NAMESPACE, type NotifyFunction, SERVICE_NAME } from './notify-function';
import type { FailureDestination, ServiceQueue } from './queues';

/** Every DLQ the alarms watch: the declared queues' and the bus functions' on-failure destinations. */
const deadLetterQueuesOf = (props: MonitoringProps) => [
  ...props.queues.map(({ spec, deadLetterQueue }) => ({
    id: spec.id,
    purpose: spec.purpose,
    deadLetterQueue,
  })),
  ...(props.failureDestinations ?? []),
];

export interface MonitoringProps {
  readonly stage: string;
  /** `essential`: DLQs and the account's Lambda errors and throttles only, no dashboard; `full`: everything below. */
  readonly level: MonitoringLevel;
  /** Every function of the stack, keyed as NotifyStack keys them (`http:health.live`, `worker:fanout`). */
  readonly functions: ReadonlyMap<string, NotifyFunction>;
  /** Keys of `functions` that Lambda invokes asynchronously (bus functions, workers declaring `invokedAsync`). */
  readonly asyncInvoked?: ReadonlySet<string>;
  readonly queues: readonly ServiceQueue[];
  /** Dead-letter queues with no source queue: the bus functions' on-failure destinations. */
  readonly failureDestinations?: readonly FailureDestination[];
  readonly tables: readonly { readonly id: string; readonly table: dynamodb.Table }[];
  /** Quotas the stage is sized for and the share of each at which the capacity alarms fire (docs/scale.md). */
  readonly scale: ScaleSettings;
  readonly httpApi: ServiceHttpApi | undefined;
  readonly webSocketApi: ServiceWebSocketApi | undefined;
  /** Subscribed to a topic the stack creates. */
  readonly alarmEmail: string | undefined;
  /** An existing topic that gets every alarm too (e.g. a chat or paging integration). */
  readonly alarmTopicArn: string | undefined;
  readonly removalPolicy: RemovalPolicy;
}

/** The thresholds the alarms use; docs/operations.md explains each. */
export const ALARM_THRESHOLDS = {
  /** Percent of HTTP requests answered 5xx over 5 minutes (with at least `minRequests` requests). */
  http5xxPercent: 5,
  http5xxMinRequests: 20,
  /** WebSocket execution + integration errors in 5 minutes. */
  webSocketErrors: 5,
  /** Percent of webhook attempts that failed over 15 minutes (with at least `minAttempts` attempts). */
  webhookFailurePercent: 50,
  webhookMinAttempts: 10,
} as const;

const FIVE_MINUTES = Duration.minutes(5);

/** A Lambda metric of every function of the account and Region (no dimension), summed over 5 minutes. */
const accountLambda = (metricName: 'Errors' | 'Throttles') =>
  new cloudwatch.Metric({
    namespace: 'AWS/Lambda',
    metricName,
    statistic: cloudwatch.Stats.SUM,
    period: FIVE_MINUTES,
  });

/**
 * Alarms, an optional alarm topic and a dashboard for one stage (docs/operations.md): `essential` alarms on
 * every DLQ and the account's Lambda errors; `full` adds one errors alarm per function (with its throttles
 * when it has reserved concurrency, the only way one function is throttled alone), the APIs' and webhooks'
 * failure rates, the capacity alarms and the dashboard. All of it lives in a nested stack of its own (an
 * alarm per function would crowd the parent template); what it watches arrives as parameters.
 */
export class Monitoring extends Construct {
  /** The nested stack holding every resource below (`Template.fromStack` of it in tests). */
  readonly nestedStack: NestedStack;
  readonly alarms: cloudwatch.Alarm[] = [];
  /** The topic the stack creates for `alarmEmail`. */
  readonly topic: sns.Topic | undefined;
  /** The stage's dashboard (`full` only). */
  readonly dashboard: cloudwatch.Dashboard | undefined;
  private readonly alarmActions: actions.SnsAction[] = [];

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.nestedStack = new NestedStack(this, 'Stack', {
      description: `Notify ${props.stage}: alarms, alarm topic and dashboard`,
    });
    const inNested = this.nestedStack;
    if (props.alarmEmail) {
      // Encrypted with a key of our own: the AWS managed SNS key cannot be granted to CloudWatch.
      const key = new kms.Key(inNested, 'AlarmTopicKey', {
        description: `Notify ${props.stage}: encryption of the alarm topic`,
        enableKeyRotation: true,
        removalPolicy: props.removalPolicy,
      });
      key.grant(new iam.ServicePrincipal('cloudwatch.amazonaws.com'), 'kms:Decrypt', 'kms:GenerateDataKey*');
      this.topic = new sns.Topic(inNested, 'AlarmTopic', {
        displayName: `Notify ${props.stage} alarms`,
        masterKey: key,
        enforceSSL: true,
      });
      this.topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
      this.alarmActions.push(new actions.SnsAction(this.topic));
    }
    if (props.alarmTopicArn) {
      this.alarmActions.push(
        new actions.SnsAction(sns.Topic.fromTopicArn(inNested, 'ExistingAlarmTopic', props.alarmTopicArn)),
      );
    }

    for (const { id: queueId, purpose, deadLetterQueue } of deadLetterQueuesOf(props)) {
      this.alarm(`${queueId}-dlq`, {
        description: `Messages are waiting in the dead-letter queue of "${queueId}" (${purpose})`,
        metric: deadLetterQueue.metricApproximateNumberOfMessagesVisible({
          period: Duration.minutes(1),
          statistic: cloudwatch.Stats.MAXIMUM,
        }),
        threshold: 0,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      });
    }

    if (props.level === 'essential') {
      this.alarm('lambda-account-errors', {
        description:
          'A function of the account failed or was throttled (invocation errors + throttles of all functions in 5 ' +
          'minutes; the essential level has no alarm per function: the logs name it)',
        metric: new cloudwatch.MathExpression({
          expression: 'errors + throttles',
          label: 'account errors + throttles',
          period: FIVE_MINUTES,
          usingMetrics: { errors: accountLambda('Errors'), throttles: accountLambda('Throttles') },
        }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
      this.dashboard = undefined;
    } else {
      this.dashboard = this.fullMonitoring(props);
    }
  }

  /** The `full` level's alarms beyond the DLQs, and the dashboard. */
  private fullMonitoring(props: MonitoringProps): cloudwatch.Dashboard {
    const inNested = this.nestedStack;
    this.alarm('lambda-account-throttles', {
      description:
        'A function of the account was throttled (throttles of all functions in 5 minutes): the account concurrency is used up',
      metric: accountLambda('Throttles'),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    for (const [key, fn] of props.functions) {
      const errors = fn.function.metricErrors({ period: FIVE_MINUTES, statistic: cloudwatch.Stats.SUM });
      this.alarm(`${key}-errors`, {
        description:
          fn.reservedConcurrency === undefined
            ? `Function ${key} failed (invocation errors in 5 minutes)`
            : `Function ${key} failed or was throttled at its reserved concurrency (invocation errors + throttles in 5 minutes)`,
        metric:
          fn.reservedConcurrency === undefined
            ? errors
            : new cloudwatch.MathExpression({
                expression: 'errors + throttles',
                label: `${key} errors + throttles`,
                period: FIVE_MINUTES,
                usingMetrics: {
                  errors,
                  throttles: fn.function.metricThrottles({
                    period: FIVE_MINUTES,
                    statistic: cloudwatch.Stats.SUM,
                  }),
                },
              }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }

    const http = props.httpApi
      ? {
          requests: props.httpApi.api.metricCount({ period: FIVE_MINUTES, statistic: cloudwatch.Stats.SUM }),
          serverErrors: props.httpApi.api.metricServerError({
            period: FIVE_MINUTES,
            statistic: cloudwatch.Stats.SUM,
          }),
          clientErrors: props.httpApi.api.metricClientError({
            period: FIVE_MINUTES,
            statistic: cloudwatch.Stats.SUM,
          }),
          latency: props.httpApi.api.metricLatency({ period: FIVE_MINUTES, statistic: 'p99' }),
        }
      : undefined;
    if (http) {
      this.alarm('http-5xx-rate', {
        description: `More than ${ALARM_THRESHOLDS.http5xxPercent}% of HTTP API requests answered 5xx in 5 minutes`,
        metric: new cloudwatch.MathExpression({
          expression: `IF(requests >= ${ALARM_THRESHOLDS.http5xxMinRequests}, 100 * errors / requests, 0)`,
          label: 'HTTP 5xx %',
          period: FIVE_MINUTES,
          usingMetrics: { requests: http.requests, errors: http.serverErrors },
        }),
        threshold: ALARM_THRESHOLDS.http5xxPercent,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      });
    }

    const webSocket = props.webSocketApi ? this.webSocketMetrics(props.webSocketApi) : undefined;
    if (webSocket) {
      this.alarm('websocket-errors', {
        description: 'WebSocket API execution or integration errors (5 or more in 5 minutes)',
        metric: new cloudwatch.MathExpression({
          expression: 'execution + integration',
          label: 'WebSocket errors',
          period: FIVE_MINUTES,
          usingMetrics: { execution: webSocket.executionErrors, integration: webSocket.integrationErrors },
        }),
        threshold: ALARM_THRESHOLDS.webSocketErrors,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }

    const counter = (name: string, period = FIVE_MINUTES) =>
      new cloudwatch.Metric({
        namespace: METRICS_NAMESPACE,
        metricName: name,
        // Powertools adds `service`; lambdas/core/metrics.ts adds `stage`.
        dimensionsMap: { service: SERVICE_NAME, stage: props.stage },
        statistic: cloudwatch.Stats.SUM,
        period,
      });
    const fifteenMinutes = Duration.minutes(15);
    this.alarm('webhook-failure-rate', {
      description:
        `More than ${ALARM_THRESHOLDS.webhookFailurePercent}% of webhook delivery attempts failed in 15 minutes ` +
        '(receivers down or refusing, or our sender broken)',
      metric: new cloudwatch.MathExpression({
        expression:
          `IF(ok + failed >= ${ALARM_THRESHOLDS.webhookMinAttempts}, ` + '100 * failed / (ok + failed), 0)',
        label: 'webhook failure %',
        period: fifteenMinutes,
        usingMetrics: {
          ok: counter(SERVICE_METRICS.webhookDeliveries, fifteenMinutes),
          failed: counter(SERVICE_METRICS.webhookDeliveryFailures, fifteenMinutes),
        },
      }),
      threshold: ALARM_THRESHOLDS.webhookFailurePercent,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
    });

    this.capacityAlarms(props, http?.requests, webSocket);

    const dashboard = new cloudwatch.Dashboard(inNested, 'Dashboard', {
      // Not `notify-<stage>-<region>`, the parent's dashboard of earlier deployments: CloudFormation creates
      // this one before it deletes that one. Only the stage is cleaned: the region may be a token.
      dashboardName: `notify-${props.stage.replace(/[^\w-]/g, '-')}-${inNested.region}-monitoring`,
      defaultInterval: Duration.hours(3),
    });
    const functions = [...props.functions.values()];
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Service counters',
        width: 12,
        left: Object.values(SERVICE_METRICS).map((name) => counter(name)),
      }),
      new cloudwatch.GraphWidget({
        title: 'Dead-letter queues (messages waiting)',
        width: 12,
        left: deadLetterQueuesOf(props).map(({ id: queueId, deadLetterQueue }) =>
          deadLetterQueue.metricApproximateNumberOfMessagesVisible({
            label: queueId,
            period: Duration.minutes(1),
            statistic: cloudwatch.Stats.MAXIMUM,
          }),
        ),
      }),
    );
    const apiWidgets: cloudwatch.IWidget[] = [];
    if (http) {
      apiWidgets.push(
        new cloudwatch.GraphWidget({
          title: 'HTTP API requests and errors',
          width: 12,
          left: [http.requests, http.clientErrors, http.serverErrors],
          right: [http.latency],
        }),
      );
    }
    if (webSocket) {
      apiWidgets.push(
        new cloudwatch.GraphWidget({
          title: 'WebSocket API',
          width: 12,
          left: [webSocket.connects, webSocket.messages],
          right: [webSocket.executionErrors, webSocket.integrationErrors],
        }),
      );
    }
    if (apiWidgets.length > 0) dashboard.addWidgets(...apiWidgets);
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Function errors (per function)',
        width: 12,
        left: functions.map((fn, index) =>
          fn.function.metricErrors({
            label: [...props.functions.keys()][index],
            period: FIVE_MINUTES,
            statistic: cloudwatch.Stats.SUM,
          }),
        ),
        legendPosition: cloudwatch.LegendPosition.HIDDEN,
      }),
      new cloudwatch.GraphWidget({
        title: 'Function throttles (per function)',
        width: 12,
        left: functions.map((fn, index) =>
          fn.function.metricThrottles({
            label: [...props.functions.keys()][index],
            period: FIVE_MINUTES,
            statistic: cloudwatch.Stats.SUM,
          }),
        ),
        legendPosition: cloudwatch.LegendPosition.HIDDEN,
      }),
      new cloudwatch.AlarmStatusWidget({ title: 'Alarms', width: 24, alarms: this.alarms }),
    );
    silenceCfnLint(
      dashboard,
      'E3002',
      'CloudFormation documents Tags on AWS::CloudWatch::Dashboard; the schema of cfn-lint 1.51 predates them',
    );
    return dashboard;
  }

  /**
   * Alarms that fire before an AWS quota is reached (docs/scale.md): account concurrency, the API Gateway
   * account throttle, new WebSocket connections and each table's throughput at `alarmPercent` of the quotas the
   * stage is sized for (a table's throttle events too: a hot partition throttles far below the table quota);
   * and a backlog on every queue (its oldest message waiting longer than `queueAgeAlarmSecs`).
   */
  private capacityAlarms(
    props: MonitoringProps,
    httpRequests: cloudwatch.IMetric | undefined,
    webSocket: ReturnType<Monitoring['webSocketMetrics']> | undefined,
  ): void {
    const { quotas, alarmPercent, queueAgeAlarmSecs } = props.scale;
    const share = alarmPercent / 100;
    const minute = Duration.minutes(1);
    const perMinute = (metric: cloudwatch.Metric) =>
      metric.with({ period: minute, statistic: cloudwatch.Stats.SUM });
    this.alarm('lambda-account-concurrency', {
      description: `Lambda concurrent executions of the account reached ${alarmPercent}% of ${quotas.lambdaConcurrency} (scale.quotas.lambda_concurrency); beyond it every function is throttled`,
      metric: new cloudwatch.Metric({
        namespace: 'AWS/Lambda',
        metricName: 'ConcurrentExecutions',
        statistic: cloudwatch.Stats.MAXIMUM,
        period: minute,
      }),
      threshold: Math.floor(quotas.lambdaConcurrency * share),
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    });
    const apiTraffic: Record<string, cloudwatch.IMetric> = {};
    if (httpRequests) apiTraffic.http = (httpRequests as cloudwatch.Metric).with({ period: minute });
    if (webSocket) {
      apiTraffic.messages = perMinute(webSocket.messages);
      apiTraffic.connects = perMinute(webSocket.connects);
    }
    if (Object.keys(apiTraffic).length > 0) {
      this.alarm('apigw-account-rps', {
        description: `API Gateway requests (HTTP + WebSocket messages and connects) reached ${alarmPercent}% of the account throttle of ${quotas.apiGatewayRps}/s (scale.quotas.api_gateway_rps); @connections calls share it too`,
        metric: new cloudwatch.MathExpression({
          expression: `(${Object.keys(apiTraffic).join(' + ')}) / 60`,
          label: 'API Gateway requests/s',
          period: minute,
          usingMetrics: apiTraffic,
        }),
        threshold: Math.floor(quotas.apiGatewayRps * share),
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }
    if (webSocket) {
      this.alarm('websocket-new-connections', {
        description: `New WebSocket connections reached ${alarmPercent}% of ${quotas.webSocketNewConnectionsPerSec}/s (scale.quotas.websocket_new_connections_per_sec)`,
        metric: new cloudwatch.MathExpression({
          expression: 'connects / 60',
          label: 'new connections/s',
          period: minute,
          usingMetrics: { connects: perMinute(webSocket.connects) },
        }),
        threshold: Math.floor(quotas.webSocketNewConnectionsPerSec * share),
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }
    for (const { spec, queue } of props.queues) {
      this.alarm(`${spec.id}-age`, {
        description: `The oldest message of "${spec.id}" has waited ${queueAgeAlarmSecs} s (scale.queue_age_alarm_secs): its workers do not keep up`,
        metric: queue.metricApproximateAgeOfOldestMessage({
          period: minute,
          statistic: cloudwatch.Stats.MAXIMUM,
        }),
        threshold: queueAgeAlarmSecs,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }
    // An asynchronously invoked function's backlog is in Lambda's asynchronous queue, which has no queue metrics
    // of ours: its age (AsyncEventAge, in milliseconds), events Lambda dropped unprocessed, and failure records it
    // could not write.
    for (const [key, fn] of props.functions) {
      if (!props.asyncInvoked?.has(key)) continue;
      this.alarm(`${key}-async-age`, {
        description: `Events have waited ${queueAgeAlarmSecs} s (scale.queue_age_alarm_secs) in Lambda's asynchronous queue of ${key}: it does not keep up`,
        metric: fn.function.metric('AsyncEventAge', { period: minute, statistic: cloudwatch.Stats.MAXIMUM }),
        threshold: queueAgeAlarmSecs * 1000,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
      this.alarm(`${key}-async-lost`, {
        description: `Lambda dropped events of ${key} unprocessed (too old or throttled too long), or could not write their failure record to the DLQ, in 5 minutes: redrive cannot recover them`,
        metric: new cloudwatch.MathExpression({
          expression: 'dropped + undelivered',
          label: `${key} events dropped or failure records not written`,
          period: FIVE_MINUTES,
          usingMetrics: {
            dropped: fn.function.metric('AsyncEventsDropped', {
              period: FIVE_MINUTES,
              statistic: cloudwatch.Stats.SUM,
            }),
            undelivered: fn.function.metric('DestinationDeliveryFailures', {
              period: FIVE_MINUTES,
              statistic: cloudwatch.Stats.SUM,
            }),
          },
        }),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }
    for (const [key, fn] of props.functions) {
      if (fn.busyAfterSecs === undefined) continue;
      this.alarm(`${key}-duration`, {
        description: `An invocation of ${key} ran ${alarmPercent}% of the ${fn.busyAfterSecs} s its work must fit in (busyAfterSecs in lib/wiring): it is falling behind (for ws.sweepShard: raise scale.connection_shards)`,
        metric: fn.function.metricDuration({ period: minute, statistic: cloudwatch.Stats.MAXIMUM }),
        threshold: Math.floor(fn.busyAfterSecs * 1000 * share),
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }
    const fiveMinutes = { period: FIVE_MINUTES, statistic: cloudwatch.Stats.SUM };
    for (const { id, table } of props.tables) {
      // Percent of the table quota used by the busier direction; any throttle event counts as 100 %.
      this.alarm(`${id}-throughput`, {
        description: `Table ${id}: ${alarmPercent}% of ${quotas.dynamoDbTableUnits} units/s (scale.quotas.dynamodb_table_units) used, or requests throttled (a hot partition: docs/scale.md)`,
        metric: new cloudwatch.MathExpression({
          expression: `IF(readThrottles + writeThrottles > 0, 100, 100 * MAX([reads, writes]) / 300 / ${quotas.dynamoDbTableUnits})`,
          label: `${id} % of throughput quota`,
          period: FIVE_MINUTES,
          usingMetrics: {
            reads: table.metricConsumedReadCapacityUnits(fiveMinutes),
            writes: table.metricConsumedWriteCapacityUnits(fiveMinutes),
            readThrottles: table.metric('ReadThrottleEvents', fiveMinutes),
            writeThrottles: table.metric('WriteThrottleEvents', fiveMinutes),
          },
        }),
        threshold: alarmPercent,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      });
    }
  }

  private webSocketMetrics(webSocketApi: ServiceWebSocketApi) {
    const metric = (metricName: string) =>
      new cloudwatch.Metric({
        namespace: 'AWS/ApiGateway',
        metricName,
        dimensionsMap: { ApiId: webSocketApi.api.apiId, Stage: webSocketApi.stage.stageName },
        statistic: cloudwatch.Stats.SUM,
        period: FIVE_MINUTES,
      });
    return {
      connects: metric('ConnectCount'),
      messages: metric('MessageCount'),
      executionErrors: metric('ExecutionError'),
      integrationErrors: metric('IntegrationError'),
    };
  }

  private alarm(
    name: string,
    props: Pick<cloudwatch.AlarmProps, 'metric' | 'threshold' | 'comparisonOperator'> & {
      readonly description: string;
    },
  ): void {
    const alarm = new cloudwatch.Alarm(this.nestedStack, `${name.replace(/[^A-Za-z0-9]+/g, '-')}-alarm`, {
      metric: props.metric,
      threshold: props.threshold,
      comparisonOperator: props.comparisonOperator,
      alarmDescription: props.description,
      evaluationPeriods: 1,
      // No data (an idle stage, a queue never used) is not a failure.
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    for (const action of this.alarmActions) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
    this.alarms.push(alarm);
  }
}
