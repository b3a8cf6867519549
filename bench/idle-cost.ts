import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { addNotifyStacks } from '../lib/app';
import { stageFileFrom } from '../test/cdk/synth';
import { dollarsOf, NO_UNITS, type ServiceUnits } from './cost';
import { MONTHLY_PRICES, PRICES } from './prices';

/** One line of the idle bill: what, how many, dollars a month. */
export interface IdleCostLine {
  readonly item: string;
  readonly count: number;
  readonly dollarsPerMonth: number;
}

export interface IdleCost {
  readonly stage: string;
  readonly lines: readonly IdleCostLine[];
  readonly dollarsPerMonth: number;
}

type Resource = { Type: string; Properties?: Record<string, unknown> };

const resourcesOf = (templates: readonly Template[], type: string): Resource[] =>
  templates.flatMap((template) => Object.values(template.findResources(type)) as Resource[]);

/** Metrics an alarm evaluates: one for a plain alarm, each MetricStat of a metric-math alarm. */
const alarmMetrics = (alarm: Resource): number => {
  const metrics = alarm.Properties?.Metrics as { MetricStat?: unknown }[] | undefined;
  return metrics ? metrics.filter((metric) => metric.MetricStat).length : 1;
};

const isHighResolution = (alarm: Resource): boolean => {
  const period = alarm.Properties?.Period as number | undefined;
  return period !== undefined && period < 60;
};

/** Runs a month of a `rate(N minute[s]|hour[s])` expression; other expressions are not used by the stack. */
const runsPerMonth = (expression: string): number => {
  const match = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(expression);
  if (!match) throw new Error(`idle cost: unsupported schedule expression ${expression}`);
  const minutes =
    Number(match[1]) * { minute: 1, hour: 60, day: 1440 }[match[2] as 'minute' | 'hour' | 'day'];
  return (MONTHLY_PRICES.hoursPerMonth * 60) / minutes;
};

/**
 * The checked-in prod file holds placeholders (identity provider, alarm e-mail, origins) that it refuses to
 * deploy with; these stand in for a team's own, and change nothing that is billed.
 */
const PROD_PLACEHOLDERS = {
  region: 'us-east-1',
  alarms: { email: 'ops@notify.test' },
  cors: { allowed_origins: ['https://app.notify.test'] },
  auth: {
    issuer: 'https://idp.notify.test/',
    audience: 'notify',
    service_audience: 'notify.s2s',
    jwks_url: 'https://idp.notify.test/.well-known/jwks.json',
    jwks_cache_ttl: '300s',
    clock_skew_secs: 30,
    admin_role: 'admin',
    replay_protection: 'off',
  },
};

/** The stage's stacks (service, edge, nested) as `cdk synth -c stage=<stage>` builds them from config/<stage>.json, without bundling. */
const synthesizeStage = (stage: string): Template[] => {
  const config = stage === 'prod' ? stageFileFrom('config/prod.json', PROD_PLACEHOLDERS) : undefined;
  const app = new App({ context: { stage, config, 'aws:cdk:bundling-stacks': [] } });
  addNotifyStacks(app, { env: { account: '123456789012', region: 'us-east-1' } });
  // Every stack, nested ones included (the monitoring lives in one): each template holds only its own resources.
  return app.node
    .findAll()
    .filter(Stack.isStack)
    .map((stack) => Template.fromStack(stack));
};

/**
 * What a stage costs a month when nobody uses it, from its synthesized templates: alarms, dashboards, KMS keys,
 * secrets, web ACLs and their rules, the empty receives of the SQS event source mappings, and the recurring
 * schedules with the work of each run (`perScheduledRun`: the sweeper's measured units, when the bench has them;
 * else one invocation). Storage (empty tables, archive, logs) is not counted: it is cents for an idle stage.
 */
export const idleCost = (stage: string, perScheduledRun?: ServiceUnits): IdleCost => {
  const templates = synthesizeStage(stage);
  const lines: IdleCostLine[] = [];
  const add = (item: string, count: number, dollarsPerMonth: number) => {
    if (count > 0) lines.push({ item, count, dollarsPerMonth });
  };

  const alarms = resourcesOf(templates, 'AWS::CloudWatch::Alarm');
  const metricsOf = (subset: Resource[]) => subset.reduce((total, alarm) => total + alarmMetrics(alarm), 0);
  const standard = alarms.filter((alarm) => !isHighResolution(alarm));
  const highResolution = alarms.filter(isHighResolution);
  add('alarm metrics (standard)', metricsOf(standard), metricsOf(standard) * MONTHLY_PRICES.alarmPerMetric);
  add(
    'alarm metrics (high resolution)',
    metricsOf(highResolution),
    metricsOf(highResolution) * MONTHLY_PRICES.highResolutionAlarmPerMetric,
  );
  const composite = resourcesOf(templates, 'AWS::CloudWatch::CompositeAlarm').length;
  add('composite alarms', composite, composite * MONTHLY_PRICES.compositeAlarm);
  const dashboards = resourcesOf(templates, 'AWS::CloudWatch::Dashboard').length;
  add('dashboards', dashboards, dashboards * MONTHLY_PRICES.dashboard);
  const keys = resourcesOf(templates, 'AWS::KMS::Key').length;
  add('KMS keys', keys, keys * MONTHLY_PRICES.kmsKey);
  const secrets = resourcesOf(templates, 'AWS::SecretsManager::Secret').length;
  add('secrets', secrets, secrets * MONTHLY_PRICES.secret);
  const webAcls = resourcesOf(templates, 'AWS::WAFv2::WebACL');
  add('web ACLs', webAcls.length, webAcls.length * MONTHLY_PRICES.webAcl);
  const rules = webAcls.reduce(
    (total, acl) => total + ((acl.Properties?.Rules as unknown[]) ?? []).length,
    0,
  );
  add('web ACL rules', rules, rules * MONTHLY_PRICES.webAclRule);

  const polledQueues = new Set(
    resourcesOf(templates, 'AWS::Lambda::EventSourceMapping').map((mapping) =>
      JSON.stringify(mapping.Properties?.EventSourceArn),
    ),
  ).size;
  const idleReceives = polledQueues * MONTHLY_PRICES.idleSqsReceivesPerMonth;
  add(
    'queues polled by event source mappings',
    polledQueues,
    (idleReceives * PRICES.sqsPerMillionRequests) / 1e6,
  );

  const schedules = resourcesOf(templates, 'AWS::Scheduler::Schedule');
  const runs = schedules.reduce(
    (total, schedule) => total + runsPerMonth(String(schedule.Properties?.ScheduleExpression)),
    0,
  );
  const perRun = { ...(perScheduledRun ?? { ...NO_UNITS, lambdaInvocations: 1 }), schedulerInvocations: 1 };
  add('recurring schedules (runs and their work)', schedules.length, dollarsOf(perRun).total * runs);

  return { stage, lines, dollarsPerMonth: lines.reduce((total, line) => total + line.dollarsPerMonth, 0) };
};
