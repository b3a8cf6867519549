import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AUTH_SETTING_PREFIX, PUSH_SETTING_KEYS, PUSH_SETTING_PREFIX, pushSettingName } from '../common/env';
import { DEFAULT_PRESENCE_SCALE } from '../common/presence-settings';
import { AUTH_ENV_NAMES, pickAuthEnv } from '../common/settings';
import { DEFAULT_CONNECTION_SHARDS } from '../lambdas/domain/realtime/config';
import { DEFAULT_DELIVERY_SHARDS } from '../lambdas/domain/webhooks/settings';
import {
  ANY_ORIGIN,
  DEFAULT_FUNCTION,
  wiring as declaredWiring,
  deployedSpec,
  envNames,
  type FunctionResources,
  functionEnvironment,
  type Wiring,
} from '../lib/wiring';
import { EVENT_ARCHIVE_PATTERN } from '../lib/wiring/areas/events';
import { LocalAccess } from './access';
import { LOCAL_ACCOUNT_ID, LOCAL_REGION } from './aws-account';
import { type Delivery, type DeliveryMode, resolveDelivery } from './delivery';
import { createDemo, DEMO_PATH, type Demo } from './demo/server';
import {
  DEV_AUDIENCE,
  DEV_SERVICE_AUDIENCE,
  type Hs256Settings,
  hasAuthSettings,
  hs256FromEnv,
  mintServiceToken,
  mintUserToken,
  newDevSecret,
  type UserTokenOptions,
} from './dev-auth';
import {
  connectDynamoDbLocal,
  createTables,
  type DynamoDbLocal,
  deleteTables,
  LOCAL_AWS_ENV,
  startDynamoDbLocal,
} from './dynamodb-local';
import { LocalEventBridge } from './eventbridge/local-eventbridge';
import { type GatewayServer, type GatewayServerOptions, startGatewayServer, WS_PATH } from './gateway/server';
import { installFunctionEnvScopes, withFunctionEnv } from './lambda/function-env-scope';
import { CONCURRENT_INVOCATIONS_ENV } from './lambda/invoke-store';
import { LocalLambda } from './lambda/local-lambda';
import { createLambdaRunner, localFunctionName } from './lambda/runner';
import type { FunctionRef, InvokeFunction } from './lambda/types';
import { localCursorEnv, localWebhookEnv } from './local-keys';
import { type DynamoDbCall, startDynamoDbProxy } from './metering/dynamodb-proxy';
import type { GatewayMeter } from './metering/gateway-meter';
import type { PushStandIn } from './push/stand-in';
import { PUSH_STAND_INS, type PushStandInStarter, startPushStandIns } from './push/stand-ins';
import { LocalScheduler } from './scheduler/local-scheduler';
import { LocalSqs } from './sqs/local-sqs';

/** Stage name of the local WebSocket API; `@connections` lives under `/local/@connections`. */
export const LOCAL_STAGE = 'local';
export const LOCAL_BUS_NAME = 'notify-local';
export const LOCAL_SCHEDULE_GROUP = 'notify-local';
export const LOCAL_SCHEDULER_ROLE_ARN = `arn:aws:iam::${LOCAL_ACCOUNT_ID}:role/notify-local-scheduler`;

export interface RuntimeOptions {
  /** Port of both APIs; 0 picks a free one. Default 3000. */
  readonly port?: number;
  /** Keeps DynamoDB, queue, archive and schedule data in this folder across restarts; in memory when unset. */
  readonly dataDir?: string;
  /**
   * A DynamoDB Local that is already running (the test suite shares one per test worker) and the prefix of
   * this runtime's own tables in it, instead of a DynamoDB Local of its own; the tables are deleted on stop.
   * Not with `dataDir`, whose DynamoDB data lives in the data folder.
   */
  readonly sharedDynamoDb?: { readonly endpoint: string; readonly tablePrefix: string };
  /** Extra environment for the functions, e.g. `SERVICE__AUTH__*` of a test IdP. Wins over process.env. */
  readonly env?: Readonly<Record<string, string>>;
  /** The HS256 secret to use when no auth is configured (the CLI passes the persisted one); else random. */
  readonly devSecret?: string;
  /** Another wiring than the service's declaration (tests mount fixture handlers). */
  readonly wiring?: Wiring;
  /**
   * Tests that wait for an invocation to time out: shorter timeouts (seconds) for the workers and bus functions
   * named (lib/wiring ids, e.g. `push.deliver`), so a dead holder's claim or a Lambda retry comes sooner. Only
   * shorter than declared, never in a stage: the deployed timeouts are the wiring's.
   */
  readonly functionTimeouts?: Readonly<Record<string, number>>;
  /** No invocation errors on stderr. */
  readonly quiet?: boolean;
  /** API Gateway's WebSocket idle timeout and connection limit, shortened by tests, and how late sockets open. */
  readonly webSocket?: GatewayServerOptions['webSocket'];
  /**
   * Origins whose pages may call the REST API (the stage setting `cors.allowed_origins`); default any origin,
   * as a page under development may be served from anywhere. An empty list configures no CORS at all.
   */
  readonly corsOrigins?: readonly string[];
  /**
   * The push providers' stand-ins to start (default: every one, local/push/stand-ins.ts); their generated
   * credentials make the push settings of the functions. `SERVICE__PUSH__*` in `env` or process.env win.
   */
  readonly pushStandIns?: readonly PushStandInStarter[];
  /** Serves the demo inbox at /demo/ with its local-only token and test-notification endpoints (npm start). */
  readonly demo?: boolean;
  /**
   * AWS-like delivery (default; local/delivery.ts) or `exact`, and its seed; default from NOTIFY_LOCAL_DELIVERY
   * and NOTIFY_LOCAL_SEED, else AWS-like with a new seed (`runtime.delivery.seed` says which). A test may pass
   * a Delivery of its own to force a choice (e.g. every `$disconnect` lost).
   */
  readonly delivery?: { readonly mode?: DeliveryMode; readonly seed?: number } | Delivery;
  /**
   * Tests of outages: the functions' DynamoDB calls this picks fail as DynamoDB's 500 InternalServerError
   * (local/metering/dynamodb-proxy.ts, `fail`). Asked for every call, so a test switches an outage on and off.
   */
  readonly dynamoDbOutage?: (operation: string, request: Readonly<Record<string, unknown>>) => boolean;
  /** Benchmarks (bench/, local/metering/): hooks that count billable operations. */
  readonly meter?: {
    readonly gateway?: GatewayMeter;
    /** Every DynamoDB data-plane call the functions make, with its request units (the proxy meters them). */
    readonly dynamoDbCall?: (call: DynamoDbCall) => void;
  };
}

export interface Runtime {
  /** `http://127.0.0.1:PORT/api/v1` */
  readonly httpUrl: string;
  /** `ws://127.0.0.1:PORT/ws` */
  readonly wsUrl: string;
  /** `http://127.0.0.1:PORT/demo/` when started with `demo`. */
  readonly demoUrl: string | undefined;
  readonly port: number;
  /** Every variable the runtime set for the functions (also in process.env while it runs). */
  readonly env: Readonly<Record<string, string>>;
  /** The HS256 settings in effect; undefined when auth uses a JWKS URL only. */
  readonly hs256: Hs256Settings | undefined;
  /** Process id of DynamoDB Local's Java process; undefined with `sharedDynamoDb`. */
  readonly javaPid: number | undefined;
  /** The delivery in effect (AWS-like or exact) and its seed, to repeat a run. */
  readonly delivery: Delivery;
  readonly invoke: InvokeFunction;
  /** The stand-ins, for their counters and queue stats (benchmarks). */
  readonly standIns: {
    readonly sqs: LocalSqs;
    readonly eventBridge: LocalEventBridge;
    readonly scheduler: LocalScheduler;
    readonly lambda: LocalLambda;
    /** The push providers' stand-ins: what each device would have received. */
    readonly push: readonly PushStandIn[];
  };
  mintUserToken(sub: string, options?: UserTokenOptions): Promise<string>;
  mintServiceToken(
    name: string,
    scopes: readonly string[],
    options?: { expiresInSecs?: number },
  ): Promise<string>;
  /** Stops everything it started (Java included) and restores process.env. Safe to call twice. */
  stop(): Promise<void>;
}

/** Set once a runtime has started in this process (see startRuntime). */
let runtimeStarted = false;

const withoutHs256 = (): Promise<never> =>
  Promise.reject(new Error('This runtime verifies tokens with a JWKS URL: mint tokens with that IdP'));

/** The wiring with the timeouts of `functionTimeouts` (RuntimeOptions) shortened; an unknown id or a longer one throws. */
const withShorterTimeouts = (wiring: Wiring, timeouts: Readonly<Record<string, number>>): Wiring => {
  const shorten = <F extends { readonly id: string; readonly timeoutSecs?: number }>(fn: F): F => {
    const secs = timeouts[fn.id];
    if (secs === undefined) return fn;
    if (!(secs > 0 && secs < (fn.timeoutSecs ?? DEFAULT_FUNCTION.timeoutSecs))) {
      throw new Error(`startRuntime: functionTimeouts.${fn.id} must be shorter than its declared timeout`);
    }
    return { ...fn, timeoutSecs: secs };
  };
  const ids = [...wiring.workers, ...(wiring.busFunctions ?? [])].map((fn) => fn.id);
  const unknown = Object.keys(timeouts).filter((id) => !ids.includes(id));
  if (unknown.length > 0)
    throw new Error(`startRuntime: functionTimeouts names no function: ${unknown.join(', ')}`);
  return {
    ...wiring,
    workers: wiring.workers.map(shorten),
    ...(wiring.busFunctions ? { busFunctions: wiring.busFunctions.map(shorten) } : {}),
  };
};

/**
 * Starts the whole service locally: DynamoDB Local with the declared tables, the SQS / EventBridge /
 * Scheduler stand-ins, and one HTTP server with the REST API, the WebSocket API and `@connections`.
 * Handlers read process.env, so the environment is set before any handler is imported; one runtime per
 * process at a time (handler modules and their SDK clients are cached for the process's life, as in Lambda).
 */
export const startRuntime = async (options: RuntimeOptions = {}): Promise<Runtime> => {
  if (runtimeStarted) {
    throw new Error(
      'startRuntime: one runtime per process. Handler modules keep the clients and settings of the first ' +
        '(as a Lambda environment does); start another runtime in a child process (e.g. npm start).',
    );
  }
  const wiring = withShorterTimeouts(options.wiring ?? declaredWiring, options.functionTimeouts ?? {});
  const delivery =
    options.delivery && 'chooser' in options.delivery ? options.delivery : resolveDelivery(options.delivery);
  const dataDir = options.dataDir ? resolve(options.dataDir) : undefined;
  if (dataDir && options.sharedDynamoDb) {
    throw new Error('startRuntime: a data folder keeps its own DynamoDB data; leave out sharedDynamoDb');
  }
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  // The stand-ins name their own files (sqs-messages.json, eventbridge-archive.jsonl, schedules.json) in the
  // data folder, where `npm run replay -- --data DIR` finds them; DynamoDB Local gets a subfolder.
  const standInData = dataDir ? { dataDir } : {};

  // Stand-ins may invoke as soon as they start (e.g. messages kept by --data): hold them until the env is set.
  let envReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    envReady = resolve;
  });
  const runner = createLambdaRunner(options.quiet ? { onError: () => {} } : {});
  // Each function sees only the variables its declaration gives it (set once the stand-ins are up).
  const access = new LocalAccess(LOCAL_ACCOUNT_ID, LOCAL_REGION);
  let scopeOf: (fn: FunctionRef) => {
    own: Record<string, string>;
    hidden: ReadonlySet<string>;
    fixed: Record<string, string>;
  } = () => {
    throw new Error('startRuntime: invoked before the environment was set');
  };
  const invoke: InvokeFunction = async (fn, event, invokeOptions) => {
    await ready;
    const { own, hidden, fixed } = scopeOf(fn);
    return withFunctionEnv(own, hidden, () => runner(fn, event, invokeOptions), fixed);
  };

  const stoppers: (() => Promise<void>)[] = [];
  const uninstallEnvScopes = installFunctionEnvScopes();
  stoppers.push(async () => uninstallEnvScopes());
  const previousEnv = new Map<string, string | undefined>();
  const stopAll = async () => {
    for (const stop of stoppers.splice(0).reverse()) await stop().catch(() => {});
    for (const [name, value] of previousEnv) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    previousEnv.clear();
  };

  const corsOrigins = options.corsOrigins ?? [ANY_ORIGIN];
  const cors = corsOrigins.length ? { allowedOrigins: corsOrigins } : undefined;
  // Created once the port and the auth settings are known; until then the gateway answers 503 anyway.
  let demo: Demo | undefined;
  try {
    const gateway: GatewayServer = await startGatewayServer({
      wiring,
      invoke,
      ...(cors ? { cors } : {}),
      ...(options.demo
        ? { localRoutes: (request, response) => demo?.handle(request, response) ?? false }
        : {}),
      stage: LOCAL_STAGE,
      access,
      delivery,
      port: options.port ?? 3000,
      ...(options.webSocket ? { webSocket: options.webSocket } : {}),
      ...(options.meter?.gateway ? { meter: options.meter.gateway } : {}),
    });
    stoppers.push(() => gateway.close());
    const origin = `http://127.0.0.1:${gateway.port}`;

    const shared = options.sharedDynamoDb;
    const dynamo: DynamoDbLocal = shared
      ? await connectDynamoDbLocal(shared.endpoint)
      : await startDynamoDbLocal(dataDir ? { dataDir: join(dataDir, 'dynamodb') } : {});
    stoppers.push(() => dynamo.stop());
    const tableEnv = await createTables(dynamo.client, wiring.tables, shared?.tablePrefix);
    if (shared) stoppers.push(() => deleteTables(dynamo.client, Object.values(tableEnv)));
    for (const table of wiring.tables) {
      const name = tableEnv[envNames.tableName(table.id)];
      if (name) access.registerTable(name, table.id);
    }
    // The functions reach DynamoDB Local through a proxy that refuses what their grants do not allow.
    const dynamoProxy = await startDynamoDbProxy(dynamo.endpoint, {
      authorize: (headers, operation, body) => access.checkDynamoDb(headers, operation, body),
      ...(options.dynamoDbOutage ? { fail: options.dynamoDbOutage } : {}),
      ...(options.meter?.dynamoDbCall ? { onCall: options.meter.dynamoDbCall } : {}),
    });
    stoppers.push(() => dynamoProxy.stop());
    const dynamoEndpoint = dynamoProxy.endpoint;

    const sqs = new LocalSqs({ queues: wiring.queues, access, delivery, ...standInData });
    // Lambda's side: the workers' event source mappings, the bus functions' asynchronous queues (kept by the
    // SQS stand-in, so made before it starts) and the Invoke API for the operator's tools (`npm run redrive`).
    const lambda = new LocalLambda({
      sqs,
      workers: wiring.workers,
      busFunctions: wiring.busFunctions ?? [],
      invoke,
      access,
      ...standInData,
    });
    await sqs.start();
    stoppers.push(() => sqs.stop());
    await lambda.start();
    stoppers.push(() => lambda.stop());
    const eventBridge = new LocalEventBridge({
      busName: LOCAL_BUS_NAME,
      rules: wiring.busRules,
      archivePattern: EVENT_ARCHIVE_PATTERN,
      sqs,
      lambda,
      access,
      delivery,
      ...standInData,
    });
    await eventBridge.start();
    stoppers.push(() => eventBridge.stop());
    const scheduler = new LocalScheduler({
      targets: wiring.scheduleTargets,
      recurring: wiring.recurringSchedules,
      sqs,
      access,
      invoke,
      delivery,
      ...standInData,
    });
    await scheduler.start();
    stoppers.push(() => scheduler.stop());
    const push = await startPushStandIns(options.pushStandIns ?? PUSH_STAND_INS);
    stoppers.push(() => push.close());
    const givenPushEnv = Object.fromEntries(
      Object.entries({ ...process.env, ...options.env }).filter(
        (entry): entry is [string, string] =>
          entry[0].startsWith(PUSH_SETTING_PREFIX) && entry[1] !== undefined,
      ),
    );
    // Apps given replace the stand-ins' app whole: its default app is no app of theirs.
    const { [pushSettingName('APPS')]: _, [pushSettingName('DEFAULT_APP')]: __, ...standInUrls } = push.env;
    const pushEnv = {
      ...(givenPushEnv[pushSettingName('APPS')] === undefined ? push.env : standInUrls),
      ...givenPushEnv,
    };

    const queueEnv: Record<string, string> = {};
    for (const queue of wiring.queues) {
      queueEnv[envNames.queueUrl(queue.id)] = sqs.queueUrl(queue.id);
      queueEnv[envNames.queueArn(queue.id)] = sqs.queueArn(queue.id);
    }
    for (const worker of wiring.workers) {
      if (worker.invokedAsync) queueEnv[envNames.functionArn(worker.id)] = lambda.asyncFunctionArn(worker.id);
    }
    const configured = hasAuthSettings(process.env) || hasAuthSettings(options.env ?? {});
    const devAuthEnv: Record<string, string> = configured
      ? {}
      : {
          SERVICE__AUTH__HS256_SECRET: options.devSecret ?? newDevSecret(),
          SERVICE__AUTH__ISSUER: origin,
          SERVICE__AUTH__AUDIENCE: DEV_AUDIENCE,
          SERVICE__AUTH__SERVICE_AUDIENCE: DEV_SERVICE_AUDIENCE,
        };
    const webhookKeyEnv = localWebhookEnv(dataDir);
    const { [envNames.webhookLocalKey]: webhookLocalKey, ...webhookSettings } = webhookKeyEnv;
    const resources: FunctionResources = {
      stage: LOCAL_STAGE,
      tableName: (tableId) => {
        const name = tableEnv[envNames.tableName(tableId)];
        if (!name) throw new Error(`lib/wiring: table "${tableId}" is not declared`);
        return name;
      },
      queueUrl: (queueId) => sqs.queueUrl(queueId),
      queueArn: (queueId) => sqs.queueArn(queueId),
      functionArn: (functionId) => lambda.asyncFunctionArn(functionId),
      busName: LOCAL_BUS_NAME,
      wsCallbackUrl: wiring.webSocketRoutes.length > 0 ? `${origin}/${LOCAL_STAGE}` : undefined,
      scheduling: {
        roleArn: LOCAL_SCHEDULER_ROLE_ARN,
        group: LOCAL_SCHEDULE_GROUP,
        targetQueues: wiring.scheduleTargets.map((target) => target.targetQueue),
      },
      connectionShards: DEFAULT_CONNECTION_SHARDS,
      presence: DEFAULT_PRESENCE_SCALE,
      webhookDeliveryShards: DEFAULT_DELIVERY_SHARDS,
      cursorKey: localCursorEnv(dataDir),
      ...(webhookLocalKey ? { webhookSecretKey: { NOTIFY_WEBHOOK_LOCAL_KEY: webhookLocalKey } } : {}),
      auth: pickAuthEnv({ ...process.env, ...devAuthEnv, ...options.env }),
      ...(Object.keys(pushEnv).length > 0 ? { push: pushEnv } : {}),
    };
    const httpRouteIds = new Set(wiring.httpRoutes.map((route) => route.id));
    const environments = new Map<string, Record<string, string>>();
    const withAuthOf = (fn: FunctionRef) => httpRouteIds.has(fn.id) || fn.id.startsWith('ws.');
    const environmentOf = (fn: FunctionRef): Record<string, string> => {
      let env = environments.get(fn.id);
      if (!env) {
        const withAuth = withAuthOf(fn);
        env = functionEnvironment(fn.id, fn, resources, { withAuth });
        environments.set(fn.id, env);
      }
      return env;
    };
    const env: Record<string, string> = {
      ...LOCAL_AWS_ENV,
      AWS_REGION: LOCAL_REGION,
      AWS_ENDPOINT_URL_DYNAMODB: dynamoEndpoint,
      AWS_ENDPOINT_URL_SQS: sqs.endpoint,
      AWS_ENDPOINT_URL_EVENTBRIDGE: eventBridge.endpoint,
      AWS_ENDPOINT_URL_SCHEDULER: scheduler.endpoint,
      AWS_ENDPOINT_URL_LAMBDA: lambda.endpoint,
      ...tableEnv,
      ...queueEnv,
      [envNames.busName]: LOCAL_BUS_NAME,
      [envNames.wsCallbackUrl]: `${origin}/${LOCAL_STAGE}`,
      [envNames.schedulerRoleArn]: LOCAL_SCHEDULER_ROLE_ARN,
      [envNames.scheduleGroup]: LOCAL_SCHEDULE_GROUP,
      [envNames.stage]: LOCAL_STAGE,
      ...devAuthEnv,
      ...webhookKeyEnv,
      ...resources.cursorKey,
      ...pushEnv,
      ...options.env,
    };
    // Hidden from a function unless its declaration gives them: every resource variable and the auth settings.
    const hidden = new Set([
      ...Object.keys(env).filter(
        (name) => name.startsWith('NOTIFY_') && !Object.hasOwn(webhookSettings, name),
      ),
      ...AUTH_ENV_NAMES,
      ...PUSH_SETTING_KEYS.map(pushSettingName),
      envNames.hs256SecretArn,
    ]);
    for (const setting of Object.keys(options.env ?? {})) {
      if (!setting.startsWith(AUTH_SETTING_PREFIX) && !setting.startsWith(PUSH_SETTING_PREFIX))
        hidden.delete(setting);
    }
    scopeOf = (fn) => {
      const credentials = access.credentialsFor(
        fn,
        deployedSpec(fn, resources.auth, { withAuth: withAuthOf(fn) }),
      );
      return {
        own: environmentOf(fn),
        hidden,
        // What Lambda gives every function: its own name, its role's credentials and, as where invocations
        // run at once (Lambda Managed Instances, and this process), AWS_LAMBDA_MAX_CONCURRENCY (invoke-store.ts).
        fixed: {
          ...CONCURRENT_INVOCATIONS_ENV,
          AWS_LAMBDA_FUNCTION_NAME: localFunctionName(fn),
          AWS_ACCESS_KEY_ID: credentials.accessKeyId,
          AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
        },
      };
    };
    for (const [name, value] of Object.entries(env)) {
      previousEnv.set(name, process.env[name]);
      process.env[name] = value;
    }
    const hs256 = hs256FromEnv(process.env);
    if (options.demo) {
      demo = createDemo({
        httpUrl: `${origin}/api/v1`,
        pushStandIns: push.standIns,
        ...(cors ? { cors } : {}),
        // Only the secret generated here, which no one else holds: a configured one may be a stage's, and any
        // page the developer opens could ask the demo for that stage's tokens.
        minting:
          configured || !hs256
            ? undefined
            : {
                mintUserToken: (sub, tokenOptions) => mintUserToken(hs256, sub, tokenOptions),
                mintServiceToken: (name, scopes, tokenOptions) =>
                  mintServiceToken(hs256, name, scopes, tokenOptions),
              },
      });
    }
    envReady();
    gateway.open();
    runtimeStarted = true;

    let stopped: Promise<void> | undefined;
    return {
      httpUrl: `${origin}/api/v1`,
      wsUrl: `ws://127.0.0.1:${gateway.port}${WS_PATH}`,
      demoUrl: options.demo ? `${origin}${DEMO_PATH}` : undefined,
      port: gateway.port,
      env,
      hs256,
      javaPid: dynamo.pid,
      delivery,
      invoke,
      standIns: { sqs, eventBridge, scheduler, lambda, push: push.standIns },
      mintUserToken: (sub, tokenOptions) =>
        hs256 ? mintUserToken(hs256, sub, tokenOptions) : withoutHs256(),
      mintServiceToken: (name, scopes, tokenOptions) =>
        hs256 ? mintServiceToken(hs256, name, scopes, tokenOptions) : withoutHs256(),
      stop: () => {
        stopped ??= stopAll();
        return stopped;
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
};
