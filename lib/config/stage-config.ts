/**
 * Per-stage settings of the CDK app, read from a checked-in JSON file (config/<stage>.json) and validated at
 * synth time, so a bad deployment fails in `cdk synth` and not on the first request.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { RemovalPolicy } from 'aws-cdk-lib';
import { PriceClass } from 'aws-cdk-lib/aws-cloudfront';
import { z } from 'zod';
import { AUTH_SETTING_PREFIX, type AuthSettingKey, authSettingName, pushSettingName } from '../../common/env';
import { DEFAULT_PRESENCE_SCALE, type PresenceSettings } from '../../common/presence-settings';
import {
  APNS_ENVIRONMENTS,
  type ApnsEnvironment,
  AUTH_ENV_NAMES,
  ConfigError,
  PUSH_PROVIDERS,
  type PushProvider,
  parseAuthConfig,
  parsePushSettings,
  REPLAY_PROTECTION_SCOPES,
} from '../../common/settings';
import { repoRoot } from '../paths';
import { ANY_ORIGIN, type CorsPolicy, invalidOriginReason } from '../wiring';

/** A stage's settings are missing or malformed; the message names the file and the offending keys. */
export class StageConfigError extends Error {
  override name = 'StageConfigError';
}

/** Where the HS256 development secret comes from (development stages only). */
export type Hs256SecretSource =
  /** The stack creates a random secret in Secrets Manager. */
  | { readonly kind: 'generate' }
  /** An existing Secrets Manager secret (name or ARN) whose SecretString is the key. */
  | { readonly kind: 'existing'; readonly secretId: string };

export type RemovalPolicyName = 'destroy' | 'retain' | 'snapshot';

export const REMOVAL_POLICIES: Record<RemovalPolicyName, RemovalPolicy> = {
  destroy: RemovalPolicy.DESTROY,
  retain: RemovalPolicy.RETAIN,
  snapshot: RemovalPolicy.SNAPSHOT,
};

export interface ThrottleLimits {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

/** AWS managed rule groups a web ACL the stack creates may use (docs/deploy.md, WAF). */
export const MANAGED_RULE_GROUPS = [
  'AWSManagedRulesAmazonIpReputationList',
  'AWSManagedRulesKnownBadInputsRuleSet',
  'AWSManagedRulesCommonRuleSet',
  'AWSManagedRulesAnonymousIpList',
] as const;
export type ManagedRuleGroup = (typeof MANAGED_RULE_GROUPS)[number];

/** The groups of a created web ACL when the stage file names none. */
export const DEFAULT_MANAGED_RULE_GROUPS: readonly ManagedRuleGroup[] = [
  'AWSManagedRulesAmazonIpReputationList',
  'AWSManagedRulesKnownBadInputsRuleSet',
  'AWSManagedRulesCommonRuleSet',
];

/** Requests per client IP and window before the created web ACL answers 429, when the stage file names none. */
export const DEFAULT_WAF_RATE_LIMIT = { requests: 2000, windowSecs: 300 } as const;

/**
 * The HTTP API behind CloudFront with a WAF web ACL (a WAF cannot attach to an HTTP API itself).
 * `webAcl` is either one the app creates in us-east-1 or an existing CLOUDFRONT-scope one.
 */
export interface WafSettings {
  readonly webAcl:
    | {
        readonly kind: 'create';
        readonly rateLimit: { readonly requests: number; readonly windowSecs: 60 | 120 | 300 | 600 };
        readonly managedRuleGroups: readonly ManagedRuleGroup[];
      }
    | { readonly kind: 'existing'; readonly arn: string };
  readonly priceClass: PriceClass;
}

/** A host name of the service's own and the ACM certificate that covers it; the DNS record is the operator's. */
export interface CustomDomain {
  readonly name: string;
  readonly certificateArn: string;
}

/** Per-worker capacity overrides; unset fields keep the declaration's values (lib/wiring/areas). */
export interface WorkerScale {
  /** Messages per invocation (SQS event source BatchSize, 1–10 without a batching window). */
  readonly batchSize?: number;
  /** Event-source MaximumConcurrency (2–1,000): concurrent batches the queue may drive. */
  readonly maxConcurrency?: number;
  /** Reserved concurrency of the worker's function: a guaranteed share that is also its ceiling. */
  readonly reservedConcurrency?: number;
}

/** Capacity settings of a stage: the account quotas it is sized for, and the knobs docs/scale.md discusses. */
export interface ScaleSettings {
  /** The account's quotas in the stage's Region (defaults: AWS's); alarms fire at `alarmPercent` of each. */
  readonly quotas: {
    readonly lambdaConcurrency: number;
    readonly apiGatewayRps: number;
    readonly webSocketNewConnectionsPerSec: number;
    /** DynamoDB on-demand throughput per table (read and write units per second, each). */
    readonly dynamoDbTableUnits: number;
  };
  readonly alarmPercent: number;
  /** A queue whose oldest message is older than this has a backlog (alarm). */
  readonly queueAgeAlarmSecs: number;
  /** Partitions of the connections' `byShard` index; raise only (rows keep the shard they were written with). */
  readonly connectionShards: number;
  /** Presence in large rooms (docs/realtime.md, presence): a summary every `summarySecs` above `announceMax`. */
  readonly presence: PresenceSettings;
  /** Partitions of each webhook's deliveries (write sharding); raise only, like the connection shards. */
  readonly webhookDeliveryShards: number;
  readonly workers: Readonly<Record<string, WorkerScale>>;
}

/** The scale settings of a stage file without a `scale` section (AWS's default quotas, us-east-1). */
export const DEFAULT_SCALE: ScaleSettings = {
  quotas: {
    lambdaConcurrency: 1000,
    apiGatewayRps: 10_000,
    webSocketNewConnectionsPerSec: 500,
    dynamoDbTableUnits: 40_000,
  },
  alarmPercent: 80,
  // Above SQS's longest DelaySeconds (15 min), so a delayed retry is not taken for a backlog.
  queueAgeAlarmSecs: 1200,
  connectionShards: 16,
  presence: DEFAULT_PRESENCE_SCALE,
  webhookDeliveryShards: 4,
  workers: {},
};

/** How much monitoring a stage gets (`monitoring` in the stage file). */
export const MONITORING_LEVELS = ['essential', 'full'] as const;
export type MonitoringLevel = (typeof MONITORING_LEVELS)[number];

/** Lambda keeps this much of the account's concurrency unreserved. */
export const UNRESERVED_CONCURRENCY = 100;

export interface StageSettings {
  readonly stage: string;
  /** Where the stage is deployed; required unless the stage is development (then the CLI's region applies). */
  readonly region: string | undefined;
  /** The account the stage belongs to; when set, a deploy with another account's credentials fails. */
  readonly account: string | undefined;
  /** Development stages accept HS256 tokens; nothing else differs in code paths. */
  readonly development: boolean;
  readonly logLevel: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  readonly logRetentionDays: number;
  readonly removalPolicy: RemovalPolicyName;
  readonly tracing: boolean;
  /** How long archived events are kept; 0 keeps them indefinitely. */
  readonly archiveRetentionDays: number;
  /** Steady-state requests per second and burst of each API's stage (API Gateway throttling). */
  readonly throttling: {
    readonly http: ThrottleLimits;
    readonly webSocket: ThrottleLimits;
  };
  /** Where alarm notifications go: an email subscribed to a topic the stack creates, and/or an existing topic. */
  readonly alarms: { readonly email: string | undefined; readonly topicArn: string | undefined };
  /**
   * Which alarms and dashboard the stage gets (docs/operations.md): `essential` alarms only on dead letters and
   * on the account's Lambda errors and throttles, within CloudWatch's free alarm metrics; `full` adds the
   * per-function, API, webhook and capacity alarms and the dashboard. Default: essential for development stages.
   */
  readonly monitoring: MonitoringLevel;
  /** CloudFront + WAF in front of the HTTP API; undefined: clients call API Gateway directly. */
  readonly waf: WafSettings | undefined;
  /** Host names of the APIs (on CloudFront for the HTTP API with `waf`, else API Gateway custom domains). */
  readonly domains: { readonly http: CustomDomain | undefined; readonly webSocket: CustomDomain | undefined };
  /** Origins whose pages may call the HTTP API (API Gateway's CORS); undefined: no browser page may. */
  readonly cors: CorsPolicy | undefined;
  /** `SERVICE__AUTH__*` variables for the functions, without the HS256 secret. */
  readonly authEnv: Readonly<Record<string, string>>;
  readonly hs256Secret: Hs256SecretSource | undefined;
  /** The Secrets Manager secret (name or ARN) holding the client secret for token introspection. */
  readonly introspectionClientSecret: { readonly secretId: string } | undefined;
  readonly scale: ScaleSettings;
  /** Push credentials per app (docs/push.md); undefined: the stage pushes nothing. */
  readonly push: PushStageSettings | undefined;
}

/** One provider's credentials of one app: the Secrets Manager secret (name or ARN) that holds them. */
export interface PushCredentialsRef {
  /** Undefined only for Expo without an access token. */
  readonly secretId: string | undefined;
  /** APNs: the environment of the app's devices registered without one. */
  readonly apnsEnvironment?: ApnsEnvironment;
}

export interface PushStageSettings {
  readonly defaultApp: string;
  readonly apps: Readonly<Record<string, Readonly<Partial<Record<PushProvider, PushCredentialsRef>>>>>;
  /** `SERVICE__PUSH__APPS` and `SERVICE__PUSH__DEFAULT_APP` of the functions that declare `push`. */
  readonly env: Readonly<Record<string, string>>;
}

/** CloudWatch Logs accepts only these retention periods. */
const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
] as const;

const authSchema = z
  .object({
    issuer: z.string().optional(),
    audience: z.string().optional(),
    service_audience: z.string().optional(),
    jwks_url: z.string().optional(),
    jwks_cache_ttl: z.union([z.string(), z.number().int()]).optional(),
    clock_skew_secs: z.number().int().optional(),
    admin_role: z.string().optional(),
    replay_protection: z
      .enum(REPLAY_PROTECTION_SCOPES, {
        error:
          'expected "off", "service" (service tokens single-use) or "all" (every token single-use, which breaks ' +
          'browser and mobile apps: they reuse their access token)',
      })
      .optional(),
    hs256_secret: z.union([z.string(), z.strictObject({ secrets_manager: z.string().min(1) })]).optional(),
    introspection_url: z.string().optional(),
    introspection_client_id: z.string().optional(),
    // The IdP issues this secret, so there is nothing to generate: only an existing secret's name or ARN.
    introspection_client_secret: z
      .union([z.string(), z.strictObject({ secrets_manager: z.string().min(1) })])
      .optional(),
    introspection_cache_ttl: z.union([z.string(), z.number().int()]).optional(),
    introspection_calls_per_sec: z.number().int().optional(),
  })
  .strict();

const throttleSchema = z.strictObject({
  rate_limit: z.number().positive(),
  burst_limit: z.number().int().positive(),
});

/** CloudFront takes web ACLs and certificates from this region only. */
export const EDGE_REGION = 'us-east-1';

/** Region of an ACM certificate ARN. */
export const certificateRegion = (arn: string): string => arn.split(':')[3] ?? '';

const domainSchema = z.strictObject({
  name: z.hostname(),
  certificate_arn: z
    .string()
    .regex(/^arn:aws[\w-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[\w-]+$/, 'expected an ACM certificate ARN'),
});

/** Commercial, China and GovCloud region names: eu-west-1, ap-southeast-2, us-gov-west-1, cn-north-1. */
const AWS_REGION = /^[a-z]{2}(-[a-z]+)+-\d$/;

const positiveInt = () => z.number().int().positive();

const scaleSchema = z.strictObject({
  quotas: z
    .strictObject({
      lambda_concurrency: positiveInt()
        .min(1000, 'AWS never sets an account below 1,000 after a request')
        .optional(),
      api_gateway_rps: positiveInt().optional(),
      websocket_new_connections_per_sec: positiveInt().optional(),
      dynamodb_table_units: positiveInt().optional(),
    })
    .optional(),
  alarm_percent: z.number().int().min(1).max(100).optional(),
  queue_age_alarm_secs: z.number().int().min(60).optional(),
  connection_shards: z.number().int().min(1).max(256).optional(),
  presence: z
    .strictObject({
      announce_max: z.number().int().min(1).max(100_000).optional(),
      // SQS DelaySeconds reaches 900 at most.
      summary_secs: z.number().int().min(1).max(900).optional(),
    })
    .optional(),
  webhook_delivery_shards: z.number().int().min(1).max(100).optional(),
  workers: z
    .record(
      z.string(),
      z
        .strictObject({
          batch_size: z.number().int().min(1).max(10).optional(),
          max_concurrency: z.number().int().min(2).max(1000).optional(),
          reserved_concurrency: positiveInt().optional(),
        })
        .refine(
          (worker) =>
            worker.max_concurrency === undefined ||
            worker.reserved_concurrency === undefined ||
            worker.max_concurrency <= worker.reserved_concurrency,
          { message: 'max_concurrency above reserved_concurrency would have the event source throttled' },
        ),
    )
    .optional(),
});

const scaleSettings = (scale: z.output<typeof scaleSchema> | undefined): ScaleSettings => {
  const workers: Record<string, WorkerScale> = {};
  for (const [id, worker] of Object.entries(scale?.workers ?? {})) {
    workers[id] = {
      ...(worker.batch_size === undefined ? {} : { batchSize: worker.batch_size }),
      ...(worker.max_concurrency === undefined ? {} : { maxConcurrency: worker.max_concurrency }),
      ...(worker.reserved_concurrency === undefined
        ? {}
        : { reservedConcurrency: worker.reserved_concurrency }),
    };
  }
  const quotas = DEFAULT_SCALE.quotas;
  return {
    quotas: {
      lambdaConcurrency: scale?.quotas?.lambda_concurrency ?? quotas.lambdaConcurrency,
      apiGatewayRps: scale?.quotas?.api_gateway_rps ?? quotas.apiGatewayRps,
      webSocketNewConnectionsPerSec:
        scale?.quotas?.websocket_new_connections_per_sec ?? quotas.webSocketNewConnectionsPerSec,
      dynamoDbTableUnits: scale?.quotas?.dynamodb_table_units ?? quotas.dynamoDbTableUnits,
    },
    alarmPercent: scale?.alarm_percent ?? DEFAULT_SCALE.alarmPercent,
    queueAgeAlarmSecs: scale?.queue_age_alarm_secs ?? DEFAULT_SCALE.queueAgeAlarmSecs,
    connectionShards: scale?.connection_shards ?? DEFAULT_SCALE.connectionShards,
    presence: {
      announceMax: scale?.presence?.announce_max ?? DEFAULT_SCALE.presence.announceMax,
      summarySecs: scale?.presence?.summary_secs ?? DEFAULT_SCALE.presence.summarySecs,
    },
    webhookDeliveryShards: scale?.webhook_delivery_shards ?? DEFAULT_SCALE.webhookDeliveryShards,
    workers,
  };
};

const originSchema = z.string().superRefine((origin, context) => {
  const reason = invalidOriginReason(origin);
  if (reason) context.addIssue({ code: 'custom', message: reason });
});

const corsSchema = z.strictObject({
  allowed_origins: z
    .array(originSchema)
    .min(1, 'list at least one origin, or leave cors out to allow none')
    .refine((origins) => !origins.includes(ANY_ORIGIN) || origins.length === 1, {
      message: `"${ANY_ORIGIN}" allows every origin: list it alone`,
    })
    .refine((origins) => new Set(origins).size === origins.length, { message: 'lists an origin twice' }),
});

// A Secrets Manager secret's name (1–512 of letters, digits and /_+=.@-) or ARN: checked for placeholders below.
const secretRef = z.string().min(1, 'expected the name or ARN of a Secrets Manager secret').max(2048);
const pushProviderRef = z.strictObject({ secret: secretRef });
const pushSchema = z
  .strictObject({
    default_app: z.string().optional(),
    apps: z
      .record(
        z.string().regex(/^[A-Za-z0-9._-]{1,256}$/, 'app ids are 1–256 letters, digits and . _ -'),
        z
          .strictObject({
            fcm: pushProviderRef.optional(),
            apns: z
              .strictObject({ secret: secretRef, environment: z.enum(APNS_ENVIRONMENTS).optional() })
              .optional(),
            webpush: pushProviderRef.optional(),
            // Expo's access token is optional (required only when the Expo project enforces push security).
            expo: z.strictObject({ secret: secretRef.optional() }).optional(),
          })
          .refine((app) => Object.keys(app).length > 0, {
            message: `name at least one of ${PUSH_PROVIDERS.join(', ')}`,
          }),
      )
      .refine((apps) => Object.keys(apps).length > 0, {
        message: 'name at least one app, or leave push out',
      }),
  })
  .refine((push) => push.default_app === undefined || push.default_app in push.apps, {
    message: 'default_app must be one of apps',
    path: ['default_app'],
  })
  .refine((push) => push.default_app !== undefined || Object.keys(push.apps).length === 1, {
    message: 'is required with more than one app',
    path: ['default_app'],
  });

const fileSchema = z.strictObject({
  development: z.boolean({ error: 'is required (true or false)' }),
  region: z.string().regex(AWS_REGION, 'expected an AWS region such as "eu-west-1"').optional(),
  account: z
    .string()
    .regex(/^\d{12}$/, 'expected a 12-digit AWS account id (as a string)')
    .optional(),
  log_level: z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR']),
  log_retention_days: z.number().refine((days) => (LOG_RETENTION_DAYS as readonly number[]).includes(days), {
    message: `must be one of ${LOG_RETENTION_DAYS.join(', ')}`,
  }),
  removal_policy: z.enum(['destroy', 'retain', 'snapshot']),
  tracing: z.boolean(),
  archive_retention_days: z.number().int().min(0),
  throttling: z.strictObject({ http: throttleSchema, websocket: throttleSchema }),
  alarms: z
    .strictObject({
      email: z.email().optional(),
      topic_arn: z
        .string()
        .regex(/^arn:aws[\w-]*:sns:[a-z0-9-]+:\d{12}:[\w-]+$/, 'expected an SNS topic ARN')
        .optional(),
    })
    .optional(),
  monitoring: z.enum(MONITORING_LEVELS).optional(),
  waf: z
    .strictObject({
      web_acl_arn: z
        .string()
        .regex(
          /^arn:aws[\w-]*:wafv2:us-east-1:\d{12}:global\/webacl\/[\w-]+\/[\w-]+$/,
          'expected the ARN of a CLOUDFRONT-scope web ACL (arn:aws:wafv2:us-east-1:<account>:global/webacl/…)',
        )
        .optional(),
      rate_limit: z
        .strictObject({
          // WAF's bounds for a rate-based rule.
          requests: z.number().int().min(10).max(2_000_000_000),
          window_secs: z.union([z.literal(60), z.literal(120), z.literal(300), z.literal(600)]).optional(),
        })
        .optional(),
      managed_rule_groups: z.array(z.enum(MANAGED_RULE_GROUPS)).optional(),
      // CloudFront's own names: PriceClass_100, PriceClass_200, PriceClass_All.
      price_class: z.enum(PriceClass).optional(),
    })
    .refine((waf) => !(waf.web_acl_arn && (waf.rate_limit || waf.managed_rule_groups)), {
      message:
        'web_acl_arn names an existing web ACL, whose rules are its own: drop rate_limit and managed_rule_groups, ' +
        'or drop web_acl_arn to let the stack create one',
    })
    .optional(),
  domains: z
    .strictObject({ http: domainSchema.optional(), websocket: domainSchema.optional() })
    .refine((domains) => !domains.http || domains.http.name !== domains.websocket?.name, {
      message: 'http and websocket need names of their own (API Gateway cannot map both kinds to one domain)',
    })
    .optional(),
  cors: corsSchema.optional(),
  auth: authSchema,
  scale: scaleSchema.optional(),
  push: pushSchema.optional(),
});

const customDomain = (domain: z.output<typeof domainSchema> | undefined): CustomDomain | undefined =>
  domain && { name: domain.name, certificateArn: domain.certificate_arn };

const wafSettings = (waf: z.output<typeof fileSchema>['waf']): WafSettings | undefined => {
  if (waf === undefined) return undefined;
  return {
    webAcl: waf.web_acl_arn
      ? { kind: 'existing', arn: waf.web_acl_arn }
      : {
          kind: 'create',
          rateLimit: {
            requests: waf.rate_limit?.requests ?? DEFAULT_WAF_RATE_LIMIT.requests,
            windowSecs: waf.rate_limit?.window_secs ?? DEFAULT_WAF_RATE_LIMIT.windowSecs,
          },
          managedRuleGroups: waf.managed_rule_groups ?? DEFAULT_MANAGED_RULE_GROUPS,
        },
    // North America and Europe only: the API's callers are mostly backends in one region.
    priceClass: waf.price_class ?? PriceClass.PRICE_CLASS_100,
  };
};

/** The value at `path` of the raw file, to tell a missing key from a malformed one. */
const valueAt = (raw: unknown, path: readonly PropertyKey[]): unknown =>
  path.reduce<unknown>(
    (value, key) =>
      value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined,
    raw,
  );

const STAGE_NAME = /^[a-z][a-z0-9-]{0,19}$/;

/** Placeholder that stands for a Secrets Manager value while the other auth settings are validated. */
const SECRET_PLACEHOLDER = 'x'.repeat(64);

/** `SERVICE__AUTH__JWKS_URL` → `auth.jwks_url`, so errors name the key as it is written in the file. */
const configKeyOf = (envName: string) => `auth.${envName.replace(AUTH_SETTING_PREFIX, '').toLowerCase()}`;

const text = (value: unknown): boolean => typeof value === 'string' && value.trim() !== '';

/**
 * Settings the schema cannot require on its own because they depend on the kind of stage. Read from the raw
 * file, so that one message names everything missing, whatever else is wrong.
 */
const settingsAStageNeeds = (raw: unknown): string[] => {
  const development = valueAt(raw, ['development']) === true;
  return [
    text(valueAt(raw, ['auth', 'issuer']))
      ? undefined
      : `${configKeyOf(authSettingName('ISSUER'))} [${authSettingName('ISSUER')}]`,
    development ||
    text(valueAt(raw, ['auth', 'jwks_url'])) ||
    text(valueAt(raw, ['auth', 'introspection_url']))
      ? undefined
      : `${configKeyOf(authSettingName('JWKS_URL'))} [${authSettingName('JWKS_URL')}] (the identity provider's key set)`,
    // Alarms that notify nobody are not operable: a deployable stage names where they go.
    development || text(valueAt(raw, ['alarms', 'email'])) || text(valueAt(raw, ['alarms', 'topic_arn']))
      ? undefined
      : 'alarms.email or alarms.topic_arn (where alarm notifications go)',
    // The CDK CLI falls back to us-east-1 when it finds no region: a production stage says where it lives.
    development || text(valueAt(raw, ['region']))
      ? undefined
      : 'region (the AWS region the stage is deployed to, e.g. "eu-west-1")',
  ].filter((problem) => problem !== undefined);
};

/** Host names reserved for documentation (RFC 2606) or guaranteed not to resolve (RFC 6761): placeholders. */
const PLACEHOLDER_HOST = /(^|\.)(example\.(com|net|org)|example|invalid)\.?$/i;

const hostOf = (value: string): string => {
  if (value.includes('@') && !value.includes('/')) return value.slice(value.lastIndexOf('@') + 1);
  try {
    return new URL(value).hostname;
  } catch {
    return value;
  }
};

/** Settings of a non-development stage still holding the shipped example values (`idp.example.com`, ...). */
const placeholdersIn = (raw: unknown): string[] => {
  const origins = valueAt(raw, ['cors', 'allowed_origins']);
  return [
    ['auth', 'issuer'],
    ['auth', 'jwks_url'],
    ['auth', 'introspection_url'],
    ['alarms', 'email'],
    ['domains', 'http', 'name'],
    ['domains', 'websocket', 'name'],
    ...(Array.isArray(origins) ? origins.map((_, index) => ['cors', 'allowed_origins', index]) : []),
  ]
    .map((path) => [path.join('.'), valueAt(raw, path)] as const)
    .filter(([, value]) => typeof value === 'string' && PLACEHOLDER_HOST.test(hostOf(value)))
    .map(([key, value]) => `${key} (${String(value)})`);
};

/** Characters of a Secrets Manager secret name; an ARN is `arn:` and such a name. */
const SECRET_ID = /^(arn:aws[\w-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:)?[\w/+=.@-]{1,512}$/;
/** Words a shipped example secret name would hold instead of the operator's own. */
const PLACEHOLDER_SECRET = /example|placeholder|replace|change-?me|todo|your-/i;

/** Push secret references that are no secret's name yet (`<name of …>`, `example`, …): every stage. */
const pushPlaceholdersIn = (push: z.output<typeof pushSchema> | undefined): string[] =>
  Object.entries(push?.apps ?? {}).flatMap(([appId, providers]) =>
    Object.entries(providers)
      .filter(
        ([, ref]) =>
          ref?.secret !== undefined && (!SECRET_ID.test(ref.secret) || PLACEHOLDER_SECRET.test(ref.secret)),
      )
      .map(([provider, ref]) => `push.apps.${appId}.${provider}.secret (${ref?.secret})`),
  );

/** The push settings of the stage and the functions' variables naming them (validated as the functions will). */
const pushStageSettings = (push: z.output<typeof pushSchema> | undefined): PushStageSettings | undefined => {
  if (push === undefined) return undefined;
  const apps: Record<string, Partial<Record<PushProvider, PushCredentialsRef>>> = {};
  const variable: Record<string, Record<string, unknown>> = {};
  for (const [appId, providers] of Object.entries(push.apps)) {
    apps[appId] = {};
    variable[appId] = {};
    for (const provider of PUSH_PROVIDERS) {
      const ref = providers[provider];
      if (ref === undefined) continue;
      const environment = 'environment' in ref ? ref.environment : undefined;
      apps[appId][provider] = {
        secretId: ref.secret,
        ...(environment ? { apnsEnvironment: environment } : {}),
      };
      variable[appId][provider] = {
        ...(ref.secret === undefined ? {} : { secret: ref.secret }),
        ...(environment ? { environment } : {}),
      };
    }
  }
  const defaultApp = push.default_app ?? (Object.keys(push.apps)[0] as string);
  const env = {
    [pushSettingName('APPS')]: JSON.stringify(variable),
    [pushSettingName('DEFAULT_APP')]: defaultApp,
  };
  // What the functions will parse: the stage must not deploy settings they refuse.
  parsePushSettings(env);
  return { defaultApp, apps, env };
};

/** Validates the parsed content of a stage file; `source` names the file in error messages. */
export const parseStageConfig = (stage: string, raw: unknown, source: string): StageSettings => {
  if (!STAGE_NAME.test(stage)) {
    throw new StageConfigError(`stage "${stage}": expected a lower-case name matching ${STAGE_NAME}`);
  }
  const parsed = fileSchema.safeParse(raw);
  if (!parsed.success) {
    const missing: string[] = [];
    const needed = settingsAStageNeeds(raw);
    const problems: string[] = [];
    for (const issue of parsed.error.issues) {
      const key = issue.path.join('.') || '(file)';
      if (issue.path.length > 0 && valueAt(raw, issue.path) === undefined) {
        if (!needed.some((problem) => problem.startsWith(key))) missing.push(key);
      } else problems.push(`${key}: ${issue.message}`);
    }
    missing.push(...needed);
    // Missing keys first and by name: a new stage file is usually incomplete rather than wrong.
    const parts = [
      ...(missing.length > 0 ? [`missing ${missing.join(', ')}`] : []),
      ...(problems.length > 0 ? [`invalid ${problems.join('; ')}`] : []),
    ];
    const verdict = problems.length === 0 ? 'is incomplete' : 'is invalid';
    throw new StageConfigError(`${source} (stage "${stage}") ${verdict}: ${parts.join('; ')}`);
  }
  const file = parsed.data;
  const auth = file.auth;

  if (auth.hs256_secret !== undefined && !file.development) {
    throw new StageConfigError(
      `${source} (stage "${stage}"): auth.hs256_secret is set but the stage is not marked "development": true. ` +
        'HS256 shared secrets are for development only; remove auth.hs256_secret and set auth.jwks_url.',
    );
  }

  const httpCertificate = file.domains?.http?.certificate_arn;
  if (file.waf && httpCertificate && certificateRegion(httpCertificate) !== EDGE_REGION) {
    throw new StageConfigError(
      `${source} (stage "${stage}"): domains.http.certificate_arn must be a certificate in ${EDGE_REGION}: with waf the ` +
        'HTTP API is served by CloudFront, which only uses certificates from there.',
    );
  }

  const scale = scaleSettings(file.scale);
  const reserved = Object.values(scale.workers).reduce(
    (total, worker) => total + (worker.reservedConcurrency ?? 0),
    0,
  );
  if (reserved > scale.quotas.lambdaConcurrency - UNRESERVED_CONCURRENCY) {
    throw new StageConfigError(
      `${source} (stage "${stage}"): scale.workers reserve ${reserved} concurrent executions; the account's ` +
        `${scale.quotas.lambdaConcurrency} (scale.quotas.lambda_concurrency) leaves at most ` +
        `${scale.quotas.lambdaConcurrency - UNRESERVED_CONCURRENCY} to reserve (Lambda keeps ${UNRESERVED_CONCURRENCY} unreserved)`,
    );
  }

  const missing = settingsAStageNeeds(raw);
  const placeholders = [...(file.development ? [] : placeholdersIn(raw)), ...pushPlaceholdersIn(file.push)];
  if (missing.length > 0 || placeholders.length > 0) {
    const parts = [
      ...(missing.length > 0 ? [`missing ${missing.join(', ')}`] : []),
      ...(placeholders.length > 0
        ? [`placeholder values in ${placeholders.join(', ')}: set your own before deploying`]
        : []),
    ];
    throw new StageConfigError(`${source} (stage "${stage}") is incomplete: ${parts.join('; ')}`);
  }

  if (typeof auth.hs256_secret === 'string') {
    throw new StageConfigError(
      `${source} (stage "${stage}"): auth.hs256_secret must not be a literal key: it would sit in plain text in ` +
        'the template and in every function\'s configuration. Use {"secrets_manager": "generate"} or ' +
        '{"secrets_manager": "<secret name or ARN>"}.',
    );
  }

  if (typeof auth.introspection_client_secret === 'string') {
    throw new StageConfigError(
      `${source} (stage "${stage}"): auth.introspection_client_secret must not be a literal secret: it would sit in ` +
        "plain text in the template and in every function's configuration. Store it in Secrets Manager and use " +
        '{"secrets_manager": "<secret name or ARN>"}.',
    );
  }
  const introspectionClientSecret = auth.introspection_client_secret && {
    secretId: auth.introspection_client_secret.secrets_manager,
  };

  const hs256Secret: Hs256SecretSource | undefined =
    auth.hs256_secret === undefined
      ? undefined
      : auth.hs256_secret.secrets_manager === 'generate'
        ? { kind: 'generate' }
        : { kind: 'existing', secretId: auth.hs256_secret.secrets_manager };

  const authEnv: Record<string, string> = {};
  const set = (key: AuthSettingKey, value: string | number | boolean | undefined) => {
    if (value !== undefined) authEnv[authSettingName(key)] = String(value);
  };
  set('ISSUER', auth.issuer);
  set('AUDIENCE', auth.audience);
  set('SERVICE_AUDIENCE', auth.service_audience);
  set('JWKS_URL', auth.jwks_url);
  set('JWKS_CACHE_TTL', auth.jwks_cache_ttl);
  set('CLOCK_SKEW_SECS', auth.clock_skew_secs);
  set('ADMIN_ROLE', auth.admin_role);
  set('REPLAY_PROTECTION', auth.replay_protection);
  set('INTROSPECTION_URL', auth.introspection_url);
  set('INTROSPECTION_CLIENT_ID', auth.introspection_client_id);
  set('INTROSPECTION_CACHE_TTL', auth.introspection_cache_ttl);
  set('INTROSPECTION_CALLS_PER_SEC', auth.introspection_calls_per_sec);

  const secretForValidation = hs256Secret === undefined ? undefined : SECRET_PLACEHOLDER;
  try {
    parseAuthConfig(
      {
        ...authEnv,
        [authSettingName('HS256_SECRET')]: secretForValidation,
        [authSettingName('INTROSPECTION_CLIENT_SECRET')]: introspectionClientSecret && SECRET_PLACEHOLDER,
      },
      { allowHs256: file.development },
    );
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    let message = error.message;
    for (const name of AUTH_ENV_NAMES) message = message.replaceAll(name, `${configKeyOf(name)} [${name}]`);
    throw new StageConfigError(`${source} (stage "${stage}") has invalid auth settings: ${message}`);
  }

  return {
    stage,
    region: file.region,
    account: file.account,
    development: file.development,
    logLevel: file.log_level,
    logRetentionDays: file.log_retention_days,
    removalPolicy: file.removal_policy,
    tracing: file.tracing,
    archiveRetentionDays: file.archive_retention_days,
    throttling: {
      http: { rateLimit: file.throttling.http.rate_limit, burstLimit: file.throttling.http.burst_limit },
      webSocket: {
        rateLimit: file.throttling.websocket.rate_limit,
        burstLimit: file.throttling.websocket.burst_limit,
      },
    },
    alarms: { email: file.alarms?.email, topicArn: file.alarms?.topic_arn },
    monitoring: file.monitoring ?? (file.development ? 'essential' : 'full'),
    waf: wafSettings(file.waf),
    domains: { http: customDomain(file.domains?.http), webSocket: customDomain(file.domains?.websocket) },
    cors: file.cors && { allowedOrigins: file.cors.allowed_origins },
    authEnv,
    hs256Secret,
    introspectionClientSecret,
    scale,
    push: pushStageSettings(file.push),
  };
};

/** Reads config/<stage>.json (or `configFile`, relative to the repository root) and validates it. */
export const loadStageConfig = (stage: string, configFile?: string): StageSettings => {
  const file = path.resolve(repoRoot, configFile ?? path.join('config', `${stage}.json`));
  const source = path.relative(repoRoot, file);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new StageConfigError(
      `stage "${stage}": no settings file ${source} (create it from config/dev.json)`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new StageConfigError(`${source}: not valid JSON (${(error as Error).message})`);
  }
  return parseStageConfig(stage, raw, source);
};
