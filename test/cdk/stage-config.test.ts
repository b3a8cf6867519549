/**
 * Stage settings: the checked-in files are valid, and a stage that could be deployed insecurely or
 * half-configured fails `cdk synth` with a message naming the setting to fix.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { App, Stack } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { addNotifyStacks } from '../../lib/app';
import {
  DEFAULT_MANAGED_RULE_GROUPS,
  DEFAULT_SCALE,
  DEFAULT_WAF_RATE_LIMIT,
  loadStageConfig,
  parseStageConfig,
  StageConfigError,
} from '../../lib/config/stage-config';
import { repoRoot } from '../../lib/paths';

const run = promisify(execFile);

const base = {
  development: false,
  region: 'eu-west-1',
  log_level: 'INFO',
  log_retention_days: 30,
  removal_policy: 'retain',
  tracing: false,
  archive_retention_days: 30,
  throttling: {
    http: { rate_limit: 100, burst_limit: 200 },
    websocket: { rate_limit: 50, burst_limit: 100 },
  },
  alarms: { email: 'ops@example.test' },
  auth: { issuer: 'https://idp.test/', jwks_url: 'https://idp.test/jwks.json' },
};

const errorOf = (action: () => unknown): StageConfigError => {
  try {
    action();
  } catch (error) {
    if (error instanceof StageConfigError) return error;
    throw error;
  }
  throw new Error('expected a StageConfigError');
};

/** config/prod.json with what an operator must set (placeholders, region) set: the rest as shipped. */
const prodWithOwnValues = () => {
  const raw = JSON.parse(readFileSync(join(repoRoot, 'config/prod.json'), 'utf8'));
  return parseStageConfig(
    'prod',
    {
      ...raw,
      region: 'eu-central-1',
      alarms: { email: 'oncall@notify.test' },
      cors: { allowed_origins: ['https://app.notify.test'] },
      auth: { ...raw.auth, issuer: 'https://login.notify.test/', jwks_url: 'https://login.notify.test/jwks' },
    },
    'config/prod.json',
  );
};

describe('checked-in stage files', () => {
  it('neither makes tokens single-use: apps and IdP client-credential tokens are reused until they expire', () => {
    for (const settings of [loadStageConfig('dev'), prodWithOwnValues()]) {
      expect(settings.authEnv.SERVICE__AUTH__REPLAY_PROTECTION).toBe('off');
    }
  });

  it('config/dev.json is a development stage whose HS256 key is generated in Secrets Manager', () => {
    const settings = loadStageConfig('dev');
    expect(settings.development).toBe(true);
    expect(settings.hs256Secret).toEqual({ kind: 'generate' });
    expect(settings.authEnv.SERVICE__AUTH__HS256_SECRET).toBeUndefined();
  });

  it('config/prod.json is refused until its placeholders and region are replaced', () => {
    const error = errorOf(() => loadStageConfig('prod'));
    expect(error.message).toContain('config/prod.json (stage "prod") is incomplete');
    expect(error.message).toContain('missing region');
    for (const key of ['auth.issuer (https://idp.example.com/)', 'auth.jwks_url', 'alarms.email', 'cors']) {
      expect(error.message).toContain(key);
    }
  });

  it('config/prod.json with its own values verifies tokens against a JWKS and keeps its data', () => {
    const settings = prodWithOwnValues();
    expect(settings.region).toBe('eu-central-1');
    expect(settings.development).toBe(false);
    expect(settings.hs256Secret).toBeUndefined();
    expect(settings.authEnv.SERVICE__AUTH__REPLAY_PROTECTION).toBe('off');
    expect(settings.authEnv.SERVICE__AUTH__JWKS_URL).toMatch(/^https:\/\//);
    expect(settings.removalPolicy).toBe('retain');
    // The HTTP API behind CloudFront with a web ACL the app creates (docs/deploy.md, WAF).
    expect(settings.waf?.webAcl.kind).toBe('create');
  });
});

describe('stage settings validation', () => {
  it('turns the file into SERVICE__AUTH__* variables as the functions read them', () => {
    const settings = parseStageConfig(
      'staging',
      {
        ...base,
        auth: {
          ...base.auth,
          jwks_cache_ttl: '5m',
          clock_skew_secs: 15,
          admin_role: 'ops',
          replay_protection: 'service',
        },
      },
      'inline',
    );
    expect(settings.authEnv).toEqual({
      SERVICE__AUTH__ISSUER: 'https://idp.test/',
      SERVICE__AUTH__JWKS_URL: 'https://idp.test/jwks.json',
      SERVICE__AUTH__JWKS_CACHE_TTL: '5m',
      SERVICE__AUTH__CLOCK_SKEW_SECS: '15',
      SERVICE__AUTH__ADMIN_ROLE: 'ops',
      SERVICE__AUTH__REPLAY_PROTECTION: 'service',
    });
  });

  it('takes replay_protection as a scope; a boolean is refused with what the scopes mean', () => {
    const withReplay = (replay_protection: unknown) =>
      parseStageConfig('staging', { ...base, auth: { ...base.auth, replay_protection } }, 'inline');
    expect(withReplay('all').authEnv.SERVICE__AUTH__REPLAY_PROTECTION).toBe('all');
    expect(withReplay('off').authEnv.SERVICE__AUTH__REPLAY_PROTECTION).toBe('off');
    expect(errorOf(() => withReplay(true)).message).toMatch(
      /auth\.replay_protection: expected "off", "service" \(service tokens single-use\) or "all"/,
    );
  });

  it('refuses an HS256 secret on a stage not marked development, whatever its form', () => {
    for (const secret of ['x'.repeat(40), { secrets_manager: 'generate' }]) {
      const error = errorOf(() =>
        parseStageConfig(
          'prod',
          { ...base, auth: { ...base.auth, hs256_secret: secret } },
          'config/prod.json',
        ),
      );
      expect(error.message).toContain('config/prod.json');
      expect(error.message).toContain('auth.hs256_secret');
      expect(error.message).toContain('"development": true');
    }
  });

  it('refuses documentation host names (example.com, .example, .invalid) on a stage not marked development', () => {
    const error = errorOf(() =>
      parseStageConfig(
        'prod',
        {
          ...base,
          alarms: { email: 'ops@mail.example.org' },
          auth: { issuer: 'https://auth.example/', jwks_url: 'https://keys.invalid/jwks.json' },
          domains: {
            websocket: {
              name: 'realtime.example.net',
              certificate_arn: 'arn:aws:acm:eu-west-1:123456789012:certificate/0f1e2d3c',
            },
          },
        },
        'config/prod.json',
      ),
    );
    expect(error.message).toBe(
      'config/prod.json (stage "prod") is incomplete: placeholder values in auth.issuer (https://auth.example/), ' +
        'auth.jwks_url (https://keys.invalid/jwks.json), alarms.email (ops@mail.example.org), ' +
        'domains.websocket.name (realtime.example.net): set your own before deploying',
    );
    // Development stages may keep them; host names that merely contain "example" are real names.
    expect(() =>
      parseStageConfig(
        'prod',
        { ...base, auth: { issuer: 'https://examples.com/', jwks_url: 'https://example.com.eu/jwks' } },
        'f',
      ),
    ).not.toThrow();
  });

  it('needs the region of a stage not marked development, and checks region and account', () => {
    const { region: _region, ...withoutRegion } = base;
    expect(errorOf(() => parseStageConfig('prod', withoutRegion, 'f')).message).toBe(
      'f (stage "prod") is incomplete: missing region (the AWS region the stage is deployed to, e.g. "eu-west-1")',
    );
    expect(errorOf(() => parseStageConfig('prod', { ...base, region: 'Ireland' }, 'f')).message).toContain(
      'region: expected an AWS region',
    );
    expect(errorOf(() => parseStageConfig('prod', { ...base, account: '1234' }, 'f')).message).toContain(
      'account: expected a 12-digit AWS account id',
    );
    const settings = parseStageConfig(
      'prod',
      { ...base, region: 'us-gov-west-1', account: '123456789012' },
      'f',
    );
    expect([settings.region, settings.account]).toEqual(['us-gov-west-1', '123456789012']);
  });

  it('names every missing auth setting of an incomplete stage', () => {
    const error = errorOf(() => parseStageConfig('prod', { ...base, auth: {} }, 'config/prod.json'));
    expect(error.message).toContain('config/prod.json (stage "prod") is incomplete');
    expect(error.message).toContain('auth.issuer [SERVICE__AUTH__ISSUER]');
    expect(error.message).toContain('auth.jwks_url [SERVICE__AUTH__JWKS_URL]');
  });

  it('names everything an incomplete production stage lacks in one message', () => {
    const { throttling: _throttling, alarms: _alarms, ...withoutOperations } = base;
    const error = errorOf(() =>
      parseStageConfig(
        'prod',
        { ...withoutOperations, auth: { issuer: 'https://idp.test/' } },
        'config/prod.json',
      ),
    );
    expect(error.message).toContain('config/prod.json (stage "prod") is incomplete: missing');
    expect(error.message).toContain('throttling');
    expect(error.message).toContain('alarms.email or alarms.topic_arn');
    expect(error.message).toContain('auth.jwks_url [SERVICE__AUTH__JWKS_URL]');
    expect(error.message).not.toContain('invalid');
  });

  it('names a missing nested setting by its full key', () => {
    const error = errorOf(() =>
      parseStageConfig(
        'prod',
        { ...base, throttling: { http: { rate_limit: 100 }, websocket: base.throttling.websocket } },
        'file',
      ),
    );
    expect(error.message).toBe('file (stage "prod") is incomplete: missing throttling.http.burst_limit');
  });

  it('reads throttling and alarm destinations; a development stage may go without alarm destination', () => {
    const settings = parseStageConfig(
      'prod',
      { ...base, alarms: { topic_arn: 'arn:aws:sns:eu-west-1:123456789012:paging' } },
      'file',
    );
    expect(settings.throttling).toEqual({
      http: { rateLimit: 100, burstLimit: 200 },
      webSocket: { rateLimit: 50, burstLimit: 100 },
    });
    expect(settings.alarms).toEqual({
      email: undefined,
      topicArn: 'arn:aws:sns:eu-west-1:123456789012:paging',
    });
    const { alarms: _alarms, ...withoutAlarms } = base;
    const development = parseStageConfig(
      'dev',
      {
        ...withoutAlarms,
        development: true,
        auth: { issuer: 'https://idp.test/', hs256_secret: { secrets_manager: 'generate' } },
      },
      'file',
    );
    expect(development.alarms).toEqual({ email: undefined, topicArn: undefined });
    expect(
      errorOf(() => parseStageConfig('prod', { ...base, alarms: { topic_arn: 'paging' } }, 'file')).message,
    ).toContain('alarms.topic_arn: expected an SNS topic ARN');
  });

  it('monitors development stages at the essential level and others in full, unless the file says', () => {
    const { alarms: _alarms, ...withoutAlarms } = base;
    const development = {
      ...withoutAlarms,
      development: true,
      auth: { issuer: 'https://idp.test/', hs256_secret: { secrets_manager: 'generate' } },
    };
    expect(parseStageConfig('dev', development, 'file').monitoring).toBe('essential');
    expect(parseStageConfig('dev', { ...development, monitoring: 'full' }, 'file').monitoring).toBe('full');
    expect(parseStageConfig('prod', base, 'file').monitoring).toBe('full');
    expect(parseStageConfig('prod', { ...base, monitoring: 'essential' }, 'file').monitoring).toBe(
      'essential',
    );
    expect(
      errorOf(() => parseStageConfig('prod', { ...base, monitoring: 'some' }, 'file')).message,
    ).toContain('monitoring');
  });

  it('refuses a literal HS256 key even on a development stage (it would be plain text in the template)', () => {
    const literal = 'a-literal-key-that-is-long-enough-for-hs256-signing';
    const error = errorOf(() =>
      parseStageConfig(
        'dev',
        { ...base, development: true, auth: { issuer: 'https://idp.test/', hs256_secret: literal } },
        'config/dev.json',
      ),
    );
    expect(error.message).toContain('auth.hs256_secret must not be a literal key');
    expect(error.message).not.toContain(literal);
  });

  it('names missing and malformed stage settings', () => {
    const { log_level: _omitted, ...withoutLogLevel } = base;
    const error = errorOf(() =>
      parseStageConfig(
        'prod',
        { ...withoutLogLevel, log_retention_days: 10, surprise: 1 },
        'config/prod.json',
      ),
    );
    expect(error.message).toContain('log_level');
    expect(error.message).toContain('log_retention_days: must be one of');
    expect(error.message).toContain('surprise');
  });

  it('rejects a short development HS256 key without echoing it', () => {
    const error = errorOf(() =>
      parseStageConfig(
        'dev',
        { ...base, development: true, auth: { issuer: 'https://idp.test/', hs256_secret: 'short-secret' } },
        'config/dev.json',
      ),
    );
    expect(error.message).toContain('auth.hs256_secret');
    expect(error.message).not.toContain('short-secret');
  });

  it('rejects plain http key sets and stage names CloudFormation cannot carry', () => {
    expect(
      errorOf(() =>
        parseStageConfig(
          'prod',
          { ...base, auth: { ...base.auth, jwks_url: 'http://idp.test/jwks' } },
          'file',
        ),
      ).message,
    ).toContain('auth.jwks_url');
    expect(errorOf(() => parseStageConfig('Prod_1', base, 'file')).message).toContain('stage "Prod_1"');
  });

  it('says which file is missing for an unknown stage', () => {
    expect(errorOf(() => loadStageConfig('qa')).message).toContain('config/qa.json');
  });
});

describe('scale settings', () => {
  const withScale = (scale: unknown) => parseStageConfig('prod', { ...base, scale }, 'file').scale;

  it('defaults to AWS’s quotas and the declared capacity when absent', () => {
    expect(parseStageConfig('prod', base, 'file').scale).toEqual(DEFAULT_SCALE);
    expect(DEFAULT_SCALE.quotas).toEqual({
      lambdaConcurrency: 1000,
      apiGatewayRps: 10_000,
      webSocketNewConnectionsPerSec: 500,
      dynamoDbTableUnits: 40_000,
    });
  });

  it('reads raised quotas, the alarm share, the shard count and per-worker overrides', () => {
    expect(
      withScale({
        quotas: { lambda_concurrency: 3000, api_gateway_rps: 80_000 },
        alarm_percent: 70,
        connection_shards: 64,
        presence: { summary_secs: 10 },
        webhook_delivery_shards: 8,
        workers: { 'webhooks.deliver': { max_concurrency: 50, reserved_concurrency: 100, batch_size: 1 } },
      }),
    ).toEqual({
      ...DEFAULT_SCALE,
      quotas: { ...DEFAULT_SCALE.quotas, lambdaConcurrency: 3000, apiGatewayRps: 80_000 },
      alarmPercent: 70,
      connectionShards: 64,
      presence: { announceMax: 100, summarySecs: 10 },
      webhookDeliveryShards: 8,
      workers: { 'webhooks.deliver': { maxConcurrency: 50, reservedConcurrency: 100, batchSize: 1 } },
    });
  });

  it('refuses values AWS does not accept, and reservations the account cannot give', () => {
    expect(errorOf(() => withScale({ workers: { w: { max_concurrency: 1 } } })).message).toContain(
      'scale.workers.w.max_concurrency',
    );
    expect(errorOf(() => withScale({ workers: { w: { batch_size: 11 } } })).message).toContain(
      'scale.workers.w.batch_size',
    );
    expect(
      errorOf(() => withScale({ workers: { w: { max_concurrency: 20, reserved_concurrency: 10 } } })).message,
    ).toMatch(/max_concurrency above reserved_concurrency/);
    expect(errorOf(() => withScale({ workers: { w: { reserved_concurrency: 950 } } })).message).toMatch(
      /reserve 950 concurrent executions; the account's 1000 .* leaves at most 900/,
    );
    expect(errorOf(() => withScale({ connection_shards: 0 })).message).toContain('scale.connection_shards');
    // SQS delays a message by at most 15 minutes.
    expect(errorOf(() => withScale({ presence: { summary_secs: 901 } })).message).toContain(
      'scale.presence.summary_secs',
    );
    expect(errorOf(() => withScale({ presence: { announce_max: 0 } })).message).toContain(
      'scale.presence.announce_max',
    );
    // A re-send finds its delivery with one BatchGetItem of every shard's key (100 at most).
    expect(errorOf(() => withScale({ webhook_delivery_shards: 101 })).message).toContain(
      'scale.webhook_delivery_shards',
    );
  });
});

describe('waf settings', () => {
  const ACL =
    'arn:aws:wafv2:us-east-1:123456789012:global/webacl/central/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b';
  const withWaf = (waf: unknown) => parseStageConfig('prod', { ...base, waf }, 'file').waf;

  it('means no CloudFront when absent, and a created web ACL with defaults when empty', () => {
    expect(parseStageConfig('prod', base, 'file').waf).toBeUndefined();
    expect(withWaf({})).toEqual({
      webAcl: {
        kind: 'create',
        rateLimit: DEFAULT_WAF_RATE_LIMIT,
        managedRuleGroups: DEFAULT_MANAGED_RULE_GROUPS,
      },
      priceClass: 'PriceClass_100',
    });
    expect(withWaf({ rate_limit: { requests: 100 }, managed_rule_groups: [] })?.webAcl).toEqual({
      kind: 'create',
      rateLimit: { requests: 100, windowSecs: DEFAULT_WAF_RATE_LIMIT.windowSecs },
      managedRuleGroups: [],
    });
  });

  it('takes an existing CLOUDFRONT web ACL, but not together with rules of its own', () => {
    expect(withWaf({ web_acl_arn: ACL })?.webAcl).toEqual({ kind: 'existing', arn: ACL });
    expect(errorOf(() => withWaf({ web_acl_arn: ACL, rate_limit: { requests: 100 } })).message).toMatch(
      /invalid waf: web_acl_arn names an existing web ACL/,
    );
    // A REGIONAL ACL cannot be attached to CloudFront.
    const regional =
      'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/api/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b';
    expect(errorOf(() => withWaf({ web_acl_arn: regional })).message).toContain('waf.web_acl_arn');
  });

  it('refuses limits, windows and rule groups WAF does not have', () => {
    expect(errorOf(() => withWaf({ rate_limit: { requests: 5 } })).message).toContain(
      'waf.rate_limit.requests',
    );
    expect(errorOf(() => withWaf({ rate_limit: { requests: 100, window_secs: 90 } })).message).toContain(
      'waf.rate_limit.window_secs',
    );
    expect(errorOf(() => withWaf({ managed_rule_groups: ['AWSManagedRulesSQLiRuleSet'] })).message).toContain(
      'waf.managed_rule_groups.0',
    );
  });
});

describe('cors settings', () => {
  const withCors = (cors: unknown) => parseStageConfig('prod', { ...base, cors }, 'file').cors;

  it('means no browser origin when absent; takes exact origins or "*" alone', () => {
    expect(parseStageConfig('prod', base, 'file').cors).toBeUndefined();
    expect(withCors({ allowed_origins: ['https://app.example.test', 'http://localhost:5173'] })).toEqual({
      allowedOrigins: ['https://app.example.test', 'http://localhost:5173'],
    });
    expect(withCors({ allowed_origins: ['*'] })).toEqual({ allowedOrigins: ['*'] });
  });

  it('refuses what a browser never sends as Origin, plain http off loopback, "*" among others, an empty list', () => {
    const refused = (origins: unknown[]) => errorOf(() => withCors({ allowed_origins: origins })).message;
    expect(refused(['https://app.example.test/'])).toMatch(
      /cors\.allowed_origins\.0: "https:\/\/app\.example\.test\/" is not an origin: write it as https:\/\/app\.example\.test/,
    );
    expect(refused(['app.example.test'])).toContain('cors.allowed_origins.0');
    expect(refused(['https://app.example.test/inbox'])).toContain('is not an origin');
    expect(refused(['http://app.example.test'])).toMatch(/only https:\/\/ origins/);
    expect(refused(['*', 'https://app.example.test'])).toMatch(/"\*" allows every origin: list it alone/);
    expect(refused(['https://a.example.test', 'https://a.example.test'])).toContain('lists an origin twice');
    expect(refused([])).toMatch(/list at least one origin/);
    expect(errorOf(() => withCors({ allowed_origins: ['*'], allow_credentials: true })).message).toContain(
      'allow_credentials',
    );
  });

  it("is set in the checked-in stage files: any origin on dev, the app's own on prod", () => {
    expect(loadStageConfig('dev').cors).toEqual({ allowedOrigins: ['*'] });
    // prod ships the app's own origin as a placeholder, refused until replaced (with the IdP's).
    const prod = JSON.parse(readFileSync(join(repoRoot, 'config/prod.json'), 'utf8'));
    expect(prod.cors.allowed_origins).toEqual(['https://app.example.com']);
    expect(errorOf(() => loadStageConfig('prod')).message).toContain(
      'cors.allowed_origins.0 (https://app.example.com)',
    );
  });
});

describe('domains settings', () => {
  const certificate = (region: string) =>
    `arn:aws:acm:${region}:123456789012:certificate/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d`;

  it('takes a host name and a certificate per API, and none by default', () => {
    expect(parseStageConfig('prod', base, 'file').domains).toEqual({ http: undefined, webSocket: undefined });
    const domains = {
      http: { name: 'notify.example.test', certificate_arn: certificate('eu-west-1') },
      websocket: { name: 'realtime.example.test', certificate_arn: certificate('eu-west-1') },
    };
    expect(parseStageConfig('prod', { ...base, domains }, 'file').domains).toEqual({
      http: { name: 'notify.example.test', certificateArn: certificate('eu-west-1') },
      webSocket: { name: 'realtime.example.test', certificateArn: certificate('eu-west-1') },
    });
  });

  it('refuses one name for both APIs, a URL for a name, and a non-ACM certificate', () => {
    const same = { name: 'notify.example.test', certificate_arn: certificate('eu-west-1') };
    expect(
      errorOf(() => parseStageConfig('prod', { ...base, domains: { http: same, websocket: same } }, 'file'))
        .message,
    ).toMatch(/invalid domains: http and websocket need names of their own/);
    const url = { ...same, name: 'https://notify.example.test' };
    expect(
      errorOf(() => parseStageConfig('prod', { ...base, domains: { http: url } }, 'file')).message,
    ).toContain('domains.http.name');
    const iam = { ...same, certificate_arn: 'arn:aws:iam::123456789012:server-certificate/notify' };
    expect(
      errorOf(() => parseStageConfig('prod', { ...base, domains: { http: iam } }, 'file')).message,
    ).toContain('domains.http.certificate_arn');
  });

  it('needs a us-east-1 certificate for the HTTP API behind CloudFront', () => {
    const http = { name: 'notify.example.test', certificate_arn: certificate('eu-west-1') };
    expect(
      errorOf(() => parseStageConfig('prod', { ...base, waf: {}, domains: { http } }, 'file')).message,
    ).toMatch(/domains\.http\.certificate_arn must be a certificate in us-east-1/);
  });
});

describe('the CDK app', () => {
  it('adds no stack when the stage settings are refused', () => {
    const app = new App({ context: { stage: 'prod', config: 'test/cdk/fixtures/prod-incomplete.json' } });
    expect(() => addNotifyStacks(app)).toThrow(
      /is incomplete: missing throttling\.websocket, auth\.issuer .*alarms\.email or alarms\.topic_arn/,
    );
    expect(app.node.children).toHaveLength(0);
  });

  /** A child node loading aws-cdk-lib through tsx: ~10 s alone, over 30 s on a busy 2-core machine. */
  const SYNTH_PROCESS_TIMEOUT_MS = 120_000;

  /** Runs the app as `cdk synth` does (context in CDK_CONTEXT_JSON); the failure it must end with. */
  const synthFailure = (context: Record<string, string>, cliEnv: Record<string, string> = {}) =>
    run(process.execPath, ['--import', 'tsx', 'bin/notify.ts'], {
      cwd: repoRoot,
      env: {
        ...process.env,
        CDK_CONTEXT_JSON: JSON.stringify(context),
        CDK_OUTDIR: '/nonexistent-never-written',
        ...cliEnv,
      },
    }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );

  it(
    "fails synth of the shipped config/prod.json, naming each placeholder and the region, even with the CLI's us-east-1 fallback",
    async () => {
      // CDK_DEFAULT_REGION: what the CDK CLI passes when it finds no region anywhere.
      const failure = await synthFailure({ stage: 'prod' }, { CDK_DEFAULT_REGION: 'us-east-1' });
      expect(failure?.code).toBe(1);
      expect(failure?.stderr).toMatch(
        /^Notify: config\/prod\.json \(stage "prod"\) is incomplete: missing region/,
      );
      expect(failure?.stderr).toContain(
        'placeholder values in auth.issuer (https://idp.example.com/), auth.jwks_url (https://idp.example.com/.well-known/jwks.json), alarms.email (ops@example.com)',
      );
      expect(failure?.stderr).not.toMatch(/\n\s+at /);
    },
    SYNTH_PROCESS_TIMEOUT_MS,
  );

  it(
    'fails synth of a production stage configured with an HS256 secret, with a message and no stack trace',
    async () => {
      const failure = await synthFailure({ stage: 'prod', config: 'test/cdk/fixtures/prod-with-hs256.json' });
      expect(failure?.code).toBe(1);
      expect(failure?.stderr).toContain(
        'auth.hs256_secret is set but the stage is not marked "development": true',
      );
      expect(failure?.stderr).not.toMatch(/\n\s+at /);
    },
    SYNTH_PROCESS_TIMEOUT_MS,
  );

  it(
    'fails synth of a stage whose push credentials name a placeholder secret, naming the key',
    async () => {
      const failure = await synthFailure({
        stage: 'prod',
        config: 'test/cdk/fixtures/prod-push-placeholder.json',
      });
      expect(failure?.code).toBe(1);
      expect(failure?.stderr).toContain(
        'placeholder values in push.apps.com.acme.app.apns.secret (<name of the secret holding the APNs key>)',
      );
      expect(failure?.stderr).not.toContain('push.apps.com.acme.app.fcm');
      expect(failure?.stderr).not.toMatch(/\n\s+at /);
    },
    SYNTH_PROCESS_TIMEOUT_MS,
  );
});

describe('the cdk-nag harness', () => {
  it('does report a finding (so an empty report in stack.test.ts means something)', () => {
    const app = new App();
    const stack = new Stack(app, 'nag-probe');
    new sqs.Queue(stack, 'QueueWithoutDlqOrTls');
    const report = new AwsSolutionsChecks(app).validateScope(stack);
    expect(report.violations.map((violation) => violation.ruleName)).toEqual(
      expect.arrayContaining(['AwsSolutions-SQS3', 'AwsSolutions-SQS4']),
    );
  });
});
