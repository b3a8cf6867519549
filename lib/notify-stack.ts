import {
  CfnOutput,
  Duration,
  NestedStack,
  RemovalPolicy,
  Stack,
  type StackProps,
  Tags,
  Validations,
} from 'aws-cdk-lib';
import { PriceClass } from 'aws-cdk-lib/aws-cloudfront';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import type { PushProvider } from '../common/settings';
import { REMOVAL_POLICIES, type StageSettings } from './config/stage-config';
import { ServiceHttpApi, ServiceWebSocketApi } from './constructs/apis';
import { DataTables } from './constructs/data-tables';
import { ServiceEventBus } from './constructs/event-bus';
import { HttpFrontDoor } from './constructs/http-front-door';
import { Monitoring } from './constructs/monitoring';
import { pascalCase } from './constructs/naming';
import { type FunctionDefaults, NotifyFunction } from './constructs/notify-function';
import { Queues } from './constructs/queues';
import { OneTimeScheduling } from './constructs/scheduling';
import { acknowledgeNagFindings } from './nag-suppressions';
import {
  DEFAULT_FUNCTION,
  DEFAULT_ROUTE_PATH,
  wiring as declaredWiring,
  deployedSpec,
  envNames,
  type FunctionResources,
  type FunctionSpec,
  functionEnvironment,
  functionGrants,
  MANAGE_CONNECTIONS_ACTION,
  tableActions,
  type Wiring,
  type Worker,
} from './wiring';

export interface NotifyStackProps extends StackProps {
  readonly settings: StageSettings;
  /** The wiring to build; the project's declaration unless a test injects another. */
  readonly wiring?: Wiring;
  /**
   * A CLOUDFRONT-scope web ACL (settings.waf): the HTTP API is then served through CloudFront with it, and its
   * functions refuse requests that did not come through CloudFront.
   */
  readonly webAclArn?: string;
}

/** AWS guidance for SQS event sources: visibility timeout at least six times the function timeout. */
const VISIBILITY_TIMEOUT_FACTOR = 6;

/** The nested stack of the functions no area of the wiring declares (a wiring a test builds). */
const NO_AREA = 'other';

/**
 * The whole service for one stage, built from the wiring declaration (docs/design.md principle 1): nothing here
 * names a route or a table. Each area's functions live in a nested stack of that area, so that no template nears
 * CloudFormation's 500 resources; the parent keeps what areas share, and the routes, which API Gateway would
 * refuse to create twice while an upgrade moves them (docs/deploy.md, "Stacks").
 */
export class NotifyStack extends Stack {
  readonly tables: DataTables;
  readonly queues: Queues;
  readonly eventBus: ServiceEventBus;
  readonly httpApi: ServiceHttpApi | undefined;
  /** CloudFront (+ WAF) in front of the HTTP API, when a web ACL is given. */
  readonly httpFrontDoor: HttpFrontDoor | undefined;
  readonly webSocketApi: ServiceWebSocketApi | undefined;
  readonly scheduling: OneTimeScheduling | undefined;
  /** The KMS key that envelope-encrypts webhook secrets, when a function declares `webhookSecretKey`. */
  readonly webhookSecretKey: kms.Key | undefined;
  /**
   * The secret the paging cursors' key is derived from, when a function declares `cursorKey`: the generated
   * HS256 development key where the stage has one (one secret less a month), else a generated key of its own.
   */
  readonly cursorKey: secretsmanager.ISecret | undefined;
  /** Alarms, the optional alarm topic and the dashboard. */
  readonly monitoring: Monitoring;
  /** Every function, keyed by `<kind>:<declared id>` (e.g. `http:health.live`, `ws:$connect`). */
  readonly functions = new Map<string, NotifyFunction>();
  /** The nested stack of each area's functions, by area name (`other` for functions of no area). */
  readonly functionStacks = new Map<string, NestedStack>();
  private readonly areaOf = new Map<FunctionSpec, string>();
  /** The declaration of each function of `functions`, by the same key. */
  private readonly specs = new Map<string, FunctionSpec>();

  private readonly settings: StageSettings;
  private readonly defaults: FunctionDefaults;
  private readonly authEnv: Readonly<Record<string, string>>;
  /** The HS256 key of a development stage (Secrets Manager); undefined on other stages. */
  readonly hs256Secret: secretsmanager.ISecret | undefined;
  /** The IdP client secret for token introspection (stage setting `auth.introspection_client_secret`). */
  readonly introspectionClientSecret: secretsmanager.ISecret | undefined;
  /** The push credentials' secrets of every app (stage setting `push.apps`), by provider. */
  readonly pushSecrets = new Map<PushProvider, secretsmanager.ISecret[]>();

  constructor(scope: Construct, id: string, props: NotifyStackProps) {
    super(scope, id, {
      description: `Notify: notifications, realtime and event delivery (stage ${props.settings.stage})`,
      ...props,
    });
    const wiring = props.wiring ?? declaredWiring;
    const { settings } = props;
    this.settings = settings;
    for (const [area, part] of Object.entries(wiring.areas ?? {})) {
      const specs = [
        ...(part.httpRoutes ?? []),
        ...(part.webSocketRoutes ?? []),
        ...(part.workers ?? []),
        ...(part.busFunctions ?? []),
        ...(part.recurringSchedules ?? []),
      ];
      for (const spec of specs) this.areaOf.set(spec, area);
    }
    const removalPolicy = REMOVAL_POLICIES[settings.removalPolicy];
    this.defaults = {
      stage: settings.stage,
      logLevel: settings.logLevel,
      logRetentionDays: settings.logRetentionDays,
      removalPolicy,
      tracing: settings.tracing,
    };
    Tags.of(this).add('service', 'notify');
    Tags.of(this).add('stage', settings.stage);

    this.tables = new DataTables(this, 'Tables', {
      specs: wiring.tables,
      removalPolicy,
      deletionProtection: removalPolicy !== RemovalPolicy.DESTROY,
    });
    const busFunctions = wiring.busFunctions ?? [];
    this.queues = new Queues(this, 'Queues', {
      specs: wiring.queues,
      failureDestinations: [...new Set(busFunctions.map((fn) => fn.deadLetterQueue))].map((id) => ({
        id,
        purpose: `on-failure destination of ${busFunctions
          .filter((fn) => fn.deadLetterQueue === id)
          .map((fn) => `${fn.id} (${fn.purpose})`)
          .join(', ')}`,
      })),
    });
    this.eventBus = new ServiceEventBus(this, 'Events', {
      rules: wiring.busRules,
      queues: this.queues,
      archiveRetentionDays: settings.archiveRetentionDays,
    });
    const apiProps = {
      stageName: settings.stage,
      logRetentionDays: settings.logRetentionDays,
      removalPolicy,
    };
    this.httpApi =
      wiring.httpRoutes.length > 0
        ? new ServiceHttpApi(this, 'Http', {
            ...apiProps,
            throttle: settings.throttling.http,
            ...(settings.cors ? { cors: settings.cors } : {}),
            // Behind CloudFront the host name is the distribution's (HttpFrontDoor).
            domain: props.webAclArn ? undefined : settings.domains.http,
          })
        : undefined;
    this.httpFrontDoor =
      this.httpApi && props.webAclArn
        ? new HttpFrontDoor(this, 'HttpFrontDoor', {
            stage: settings.stage,
            httpApi: this.httpApi,
            webAclArn: props.webAclArn,
            priceClass: settings.waf?.priceClass ?? PriceClass.PRICE_CLASS_100,
            domain: settings.domains.http,
            removalPolicy,
          })
        : undefined;
    // API Gateway refuses to deploy a WebSocket API without routes, so none is created until one is declared.
    this.webSocketApi =
      wiring.webSocketRoutes.length > 0
        ? new ServiceWebSocketApi(this, 'WebSocket', {
            ...apiProps,
            throttle: settings.throttling.webSocket,
            domain: settings.domains.webSocket,
          })
        : undefined;
    const allSpecs: FunctionSpec[] = [
      ...wiring.httpRoutes,
      ...wiring.webSocketRoutes,
      ...wiring.workers,
      ...busFunctions,
      ...wiring.recurringSchedules,
    ];
    this.scheduling =
      wiring.scheduleTargets.length > 0 || allSpecs.some((spec) => spec.schedules)
        ? new OneTimeScheduling(this, 'OneTimeSchedules', {
            targets: wiring.scheduleTargets,
            queues: this.queues,
          })
        : undefined;
    this.authEnv = settings.authEnv;
    this.hs256Secret = this.developmentHs256Secret(removalPolicy);
    this.introspectionClientSecret =
      settings.introspectionClientSecret &&
      this.existingSecret('IntrospectionClientSecret', settings.introspectionClientSecret.secretId);
    for (const [appId, providers] of Object.entries(settings.push?.apps ?? {})) {
      for (const [provider, ref] of Object.entries(providers) as [PushProvider, { secretId?: string }][]) {
        if (ref.secretId === undefined) continue;
        const secret = this.existingSecret(
          `Push${pascalCase(appId)}${pascalCase(provider)}Secret`,
          ref.secretId,
        );
        this.pushSecrets.set(provider, [...(this.pushSecrets.get(provider) ?? []), secret]);
      }
    }
    this.webhookSecretKey = allSpecs.some((spec) => spec.webhookSecretKey)
      ? new kms.Key(this, 'WebhookSecretKey', {
          description: 'Notify: envelope encryption of webhook signing secrets',
          enableKeyRotation: true,
          removalPolicy,
        })
      : undefined;

    this.cursorKey = allSpecs.some((spec) => spec.cursorKey)
      ? this.settings.hs256Secret?.kind === 'generate'
        ? this.hs256Secret
        : this.cursorKeySecret(removalPolicy)
      : undefined;

    for (const route of wiring.httpRoutes) {
      const fn = this.addFunction(`http:${route.id}`, `Http${pascalCase(route.id)}`, route, {
        description:
          route.path === DEFAULT_ROUTE_PATH
            ? 'HTTP $default route (requests no other route matches)'
            : `${route.method} /api/v1${route.path}`,
        withAuth: true,
      });
      if (this.httpFrontDoor) {
        this.httpFrontDoor.originSecret.grantRead(fn.function);
        fn.function.addEnvironment(envNames.originSecretArn, this.httpFrontDoor.originSecret.secretArn);
      }
      this.httpApi?.addRoute(route.id, route.method, route.path, fn.function);
    }
    for (const route of wiring.webSocketRoutes) {
      const fn = this.addFunction(`ws:${route.routeKey}`, `Ws${pascalCase(route.routeKey)}`, route, {
        description: `WebSocket route ${route.routeKey}`,
        withAuth: true,
      });
      this.webSocketApi?.addRoute(route.routeKey, fn.function);
    }
    for (const route of wiring.webSocketMockRoutes ?? []) {
      if (wiring.webSocketRoutes.some((other) => other.routeKey === route.routeKey)) {
        throw new Error(
          `lib/wiring: WebSocket route ${route.routeKey} is declared twice (function and mock)`,
        );
      }
      this.webSocketApi?.addMockRoute(route);
    }
    const asyncInvoked = new Set<string>();
    const unknownWorkers = Object.keys(settings.scale.workers).filter(
      (id) => !wiring.workers.some((worker) => worker.id === id),
    );
    if (unknownWorkers.length > 0) {
      throw new Error(
        `stage "${settings.stage}": scale.workers names ${unknownWorkers.join(', ')}, which no worker of lib/wiring is ` +
          `(workers: ${wiring.workers.map((worker) => worker.id).join(', ')})`,
      );
    }
    for (const worker of wiring.workers) {
      const source = this.queues.get(worker.queue, `worker "${worker.id}"`);
      const timeoutSecs = worker.timeoutSecs ?? DEFAULT_FUNCTION.timeoutSecs;
      if (source.spec.visibilityTimeoutSecs < VISIBILITY_TIMEOUT_FACTOR * timeoutSecs) {
        throw new Error(
          `lib/wiring: queue "${worker.queue}" has a visibility timeout of ${source.spec.visibilityTimeoutSecs}s; ` +
            `worker "${worker.id}" times out after ${timeoutSecs}s, so it needs at least ` +
            `${VISIBILITY_TIMEOUT_FACTOR * timeoutSecs}s`,
        );
      }
      // The stage's scale settings override the declared capacity (docs/scale.md, knobs).
      const scale = settings.scale.workers[worker.id] ?? {};
      const fn = this.addFunction(`worker:${worker.id}`, `Worker${pascalCase(worker.id)}`, worker, {
        description: `worker ${worker.id} (queue ${worker.queue})`,
        withAuth: false,
        reservedConcurrency: scale.reservedConcurrency,
        busyAfterSecs: worker.busyAfterSecs,
      });
      if (worker.invokedAsync) {
        // Its asynchronous invocations end where its queue's failures end: the queue's DLQ, with its alarm.
        fn.function.configureAsyncInvoke({
          retryAttempts: worker.invokedAsync.retryAttempts,
          maxEventAge: Duration.seconds(worker.invokedAsync.maxEventAgeSecs),
          onFailure: new SqsDestination(source.deadLetterQueue),
        });
        asyncInvoked.add(`worker:${worker.id}`);
      }
      fn.function.addEventSource(
        new SqsEventSource(source.queue, {
          batchSize: scale.batchSize ?? worker.batchSize,
          maxBatchingWindow: Duration.seconds(worker.maxBatchingWindowSecs),
          reportBatchItemFailures: true,
          maxConcurrency: scale.maxConcurrency ?? worker.maxConcurrency,
        }),
      );
    }
    for (const busFunction of busFunctions) {
      asyncInvoked.add(`bus:${busFunction.id}`);
      const onFailure = this.queues.failureDestination(
        busFunction.deadLetterQueue,
        `bus function "${busFunction.id}"`,
      ).deadLetterQueue;
      const fn = this.addFunction(`bus:${busFunction.id}`, `Bus${pascalCase(busFunction.id)}`, busFunction, {
        description: `bus function ${busFunction.id} (${busFunction.purpose})`,
        withAuth: false,
      });
      // Lambda's asynchronous queue: retries of a failed or crashed invocation, then a record of the event in
      // the on-failure destination (docs/events-topics-devices.md, docs/webhooks.md).
      fn.function.configureAsyncInvoke({
        retryAttempts: busFunction.retryAttempts,
        maxEventAge: Duration.seconds(busFunction.maxEventAgeSecs),
        onFailure: new SqsDestination(onFailure),
      });
      for (const rule of wiring.busRules) {
        if ('targetFunction' in rule && rule.targetFunction === busFunction.id) {
          this.eventBus.addFunctionRule(rule, fn.function, onFailure);
        }
      }
    }
    const undeclaredTargets = wiring.busRules.filter(
      (rule) => 'targetFunction' in rule && !busFunctions.some((fn) => fn.id === rule.targetFunction),
    );
    if (undeclaredTargets.length > 0) {
      throw new Error(
        `lib/wiring: bus rules ${undeclaredTargets.map((rule) => rule.id).join(', ')} invoke undeclared bus functions`,
      );
    }
    this.grantInvokes(wiring.workers);
    for (const recurring of wiring.recurringSchedules) {
      const name = `Schedule${pascalCase(recurring.id)}`;
      const fn = this.addFunction(`schedule:${recurring.id}`, name, recurring, {
        description: recurring.description,
        withAuth: false,
      });
      new scheduler.Schedule(this, `${name}Trigger`, {
        description: recurring.description,
        schedule: scheduler.ScheduleExpression.rate(Duration.minutes(recurring.everyMinutes)),
        // A missed run is superseded by the next one: retry briefly instead of for a day.
        target: new LambdaInvoke(fn.function, {
          retryAttempts: 2,
          maxEventAge: Duration.seconds(Math.max(60, recurring.everyMinutes * 60)),
        }),
      });
    }

    if (this.httpFrontDoor) {
      new CfnOutput(this, 'HttpApiUrl', {
        value: this.httpFrontDoor.baseUrl,
        description: 'REST base URL (CloudFront + WAF; the execute-api URL refuses direct calls)',
      });
      new CfnOutput(this, 'HttpApiDistributionId', {
        value: this.httpFrontDoor.distribution.distributionId,
        description: 'CloudFront distribution in front of the HTTP API',
      });
      new CfnOutput(this, 'HttpApiDistributionDomainName', {
        value: this.httpFrontDoor.distribution.distributionDomainName,
        description: 'Point domains.http here (CNAME, or a Route 53 alias) when it is set',
      });
    } else if (this.httpApi) {
      new CfnOutput(this, 'HttpApiUrl', { value: this.httpApi.baseUrl, description: 'REST base URL' });
    }
    if (this.httpApi?.customDomain) {
      new CfnOutput(this, 'HttpApiDomainTarget', {
        value: this.httpApi.customDomain.regionalDomainName,
        description: 'Point domains.http here (CNAME, or a Route 53 alias)',
      });
    }
    if (this.webSocketApi) {
      new CfnOutput(this, 'WebSocketUrl', { value: this.webSocketApi.url, description: 'WebSocket URL' });
    }
    if (this.webSocketApi?.customDomain) {
      new CfnOutput(this, 'WebSocketDomainTarget', {
        value: this.webSocketApi.customDomain.regionalDomainName,
        description: 'Point domains.websocket here (CNAME, or a Route 53 alias)',
      });
    }
    new CfnOutput(this, 'EventBusName', {
      value: this.eventBus.bus.eventBusName,
      description: 'EventBridge bus',
    });

    this.monitoring = new Monitoring(this, 'Monitoring', {
      stage: settings.stage,
      level: settings.monitoring,
      functions: this.functions,
      asyncInvoked,
      queues: this.queues.all,
      failureDestinations: this.queues.failureDestinations,
      tables: this.tables.all,
      scale: settings.scale,
      httpApi: this.httpApi,
      webSocketApi: this.webSocketApi,
      alarmEmail: settings.alarms.email,
      alarmTopicArn: settings.alarms.topicArn,
      removalPolicy,
    });
    if (this.monitoring.topic) {
      new CfnOutput(this, 'AlarmTopicArn', {
        value: this.monitoring.topic.topicArn,
        description: 'SNS topic of the alarms (confirm the e-mail subscription it sends)',
      });
    }

    acknowledgeNagFindings(this);
  }

  /**
   * A random 64-character key the stack generates into Secrets Manager, read by functions once per instance;
   * `rotation` says why it is rotated by hand (cdk-nag AwsSolutions-SMG4).
   */
  private generatedKey(
    id: string,
    description: string,
    rotation: string,
    removalPolicy: RemovalPolicy,
  ): secretsmanager.Secret {
    const secret = new secretsmanager.Secret(this, id, {
      description: `Notify ${this.settings.stage}: ${description}`,
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy,
    });
    Validations.of(secret).acknowledge({ id: 'AwsSolutions-SMG4', reason: rotation });
    return secret;
  }

  /** The HMAC key of paging cursors (it reaches only the functions that declare `cursorKey`). */
  private cursorKeySecret(removalPolicy: RemovalPolicy): secretsmanager.Secret {
    return this.generatedKey(
      'CursorKey',
      'HMAC key that signs paging cursors',
      'Instances read the key once; rotating it only invalidates cursors in flight (clients restart from the ' +
        'first page), so rotate by `aws secretsmanager put-secret-value` and a redeploy when needed.',
      removalPolicy,
    );
  }

  /**
   * The Secrets Manager secret holding a development stage's HS256 key (validated before: development stages
   * only). Functions get its ARN and read it at cold start; the key is in no template, variable or file.
   */
  private developmentHs256Secret(removalPolicy: RemovalPolicy): secretsmanager.ISecret | undefined {
    const source = this.settings.hs256Secret;
    if (source === undefined) return undefined;
    if (source.kind === 'existing') return this.existingSecret('Hs256DevelopmentSecret', source.secretId);
    const secret = this.generatedKey(
      'Hs256DevelopmentSecret',
      'HS256 key for development tokens',
      'Development stages only. Each function instance reads the key once at cold start, so a rotation ' +
        'would leave running instances on the old key; rotate by `aws secretsmanager put-secret-value` and a ' +
        'redeploy (which replaces every instance).',
      removalPolicy,
    );
    new CfnOutput(this, 'Hs256SecretArn', {
      value: secret.secretArn,
      description: 'Secrets Manager secret holding the HS256 key that signs development tokens',
    });
    return secret;
  }

  /** A Secrets Manager secret the stack does not own, by ARN or name (`secretId` of a stage file). */
  private existingSecret(constructId: string, secretId: string): secretsmanager.ISecret {
    return secretId.startsWith('arn:')
      ? secretsmanager.Secret.fromSecretCompleteArn(this, constructId, secretId)
      : secretsmanager.Secret.fromSecretNameV2(this, constructId, secretId);
  }

  /** Where this stack's resources are, for the variables of functionEnvironment (lib/wiring/function-env.ts). */
  private functionResources(usedBy: string): FunctionResources {
    return {
      stage: this.settings.stage,
      tableName: (tableId) => this.tables.table(tableId, usedBy).tableName,
      queueUrl: (queueId) => this.queues.get(queueId, usedBy).queue.queueUrl,
      queueArn: (queueId) => this.queues.get(queueId, usedBy).queue.queueArn,
      busName: this.eventBus.bus.eventBusName,
      wsCallbackUrl: this.webSocketApi?.stage.callbackUrl,
      ...(this.scheduling
        ? {
            scheduling: {
              roleArn: this.scheduling.role.roleArn,
              group: this.scheduling.group.scheduleGroupName,
              targetQueues: this.scheduling.targets.map((target) => target.targetQueue),
            },
          }
        : {}),
      connectionShards: this.settings.scale.connectionShards,
      presence: this.settings.scale.presence,
      webhookDeliveryShards: this.settings.scale.webhookDeliveryShards,
      ...(this.cursorKey ? { cursorKey: { [envNames.cursorKeySecretArn]: this.cursorKey.secretArn } } : {}),
      ...(this.webhookSecretKey
        ? { webhookSecretKey: { [envNames.webhookKmsKeyId]: this.webhookSecretKey.keyArn } }
        : {}),
      ...(this.settings.push ? { push: this.settings.push.env } : {}),
      auth: {
        ...this.authEnv,
        ...(this.hs256Secret ? { [envNames.hs256SecretArn]: this.hs256Secret.secretArn } : {}),
        ...(this.introspectionClientSecret
          ? { [envNames.introspectionClientSecretArn]: this.introspectionClientSecret.secretArn }
          : {}),
      },
    };
  }

  /**
   * What `invokes` declares, once the invoked functions exist: the invoker's variable with each one's ARN and
   * `lambda:InvokeFunction` on exactly that ARN (no other version or alias).
   */
  private grantInvokes(workers: readonly Worker[]): void {
    for (const [key, spec] of this.specs) {
      for (const functionId of spec.invokes ?? []) {
        const target = this.functions.get(`worker:${functionId}`);
        if (!target || !workers.some((worker) => worker.id === functionId && worker.invokedAsync)) {
          throw new Error(
            `lib/wiring: ${key} invokes ${functionId}, which is no worker declaring \`invokedAsync\``,
          );
        }
        const invoker = this.functions.get(key)?.function;
        invoker?.addEnvironment(envNames.functionArn(functionId), target.function.functionArn);
        invoker?.addToRolePolicy(
          new iam.PolicyStatement({
            actions: ['lambda:InvokeFunction'],
            resources: [target.function.functionArn],
          }),
        );
      }
    }
  }

  /** The nested stack of the area that declares `spec`, created with the area's first function. */
  private functionStack(spec: FunctionSpec): NestedStack {
    const area = this.areaOf.get(spec) ?? NO_AREA;
    const existing = this.functionStacks.get(area);
    if (existing) return existing;
    const stack = new NestedStack(this, `${pascalCase(area)}Functions`, {
      description: `Notify ${this.settings.stage}: functions of the ${area} area`,
    });
    this.functionStacks.set(area, stack);
    return stack;
  }

  /** Creates a function and gives it exactly the grants and variables its declaration asks for. */
  private addFunction(
    key: string,
    constructId: string,
    spec: FunctionSpec,
    options: {
      readonly description: string;
      readonly withAuth: boolean;
      readonly reservedConcurrency?: number;
      readonly busyAfterSecs?: number;
    },
  ): NotifyFunction {
    if (this.functions.has(key)) throw new Error(`lib/wiring: ${key} is declared twice`);
    const usedBy = key;
    const fn = new NotifyFunction(this.functionStack(spec), constructId, {
      spec,
      description: options.description,
      defaults: this.defaults,
      environment: functionEnvironment(usedBy, spec, this.functionResources(usedBy), {
        withAuth: options.withAuth,
      }),
      reservedConcurrency: options.reservedConcurrency,
      busyAfterSecs: options.busyAfterSecs,
    });
    const lambdaFn = fn.function;
    if (options.withAuth) {
      this.hs256Secret?.grantRead(lambdaFn);
      this.introspectionClientSecret?.grantRead(lambdaFn);
    }
    const grants = functionGrants(
      deployedSpec(spec, this.functionResources(usedBy).auth, { withAuth: options.withAuth }),
    );
    for (const [tableId, access] of grants.tables) {
      const table = this.tables.table(tableId, usedBy);
      // The actions of lib/wiring/grants.ts, on the table and its indexes: what the local stand-ins enforce.
      table.grant(lambdaFn, ...tableActions(access));
    }
    for (const queueId of grants.sendsTo) this.queues.get(queueId, usedBy).queue.grantSendMessages(lambdaFn);
    if (grants.putsEvents) this.eventBus.bus.grantPutEventsTo(lambdaFn);
    if (grants.managesConnections && this.webSocketApi) {
      const stage = this.webSocketApi.stage;
      const api = this.formatArn({ service: 'execute-api', resource: stage.api.apiId });
      lambdaFn.addToRolePolicy(
        new iam.PolicyStatement({
          actions: [MANAGE_CONNECTIONS_ACTION],
          resources: [`${api}/${stage.stageName}/*/@connections/*`],
        }),
      );
    }
    if (grants.schedules && this.scheduling) this.scheduling.grantManageSchedules(lambdaFn);
    if (grants.cursorKey && this.cursorKey) this.cursorKey.grantRead(lambdaFn);
    // Exactly the secrets of the providers whose credentials the function reads, of every app.
    for (const provider of grants.pushCredentials) {
      for (const secret of this.pushSecrets.get(provider) ?? []) secret.grantRead(lambdaFn);
    }
    if (grants.webhookSecretKey && this.webhookSecretKey) {
      if (grants.webhookSecretKey === 'encrypt') this.webhookSecretKey.grant(lambdaFn, 'kms:GenerateDataKey');
      else this.webhookSecretKey.grantDecrypt(lambdaFn);
    }
    this.functions.set(key, fn);
    this.specs.set(key, spec);
    return fn;
  }
}
