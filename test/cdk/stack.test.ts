/**
 * The synthesized template and the wiring declaration agree both ways, grants follow the declaration and
 * nothing else, IAM has no wildcards beyond AWS-mandated ones, and cdk-nag's AWS Solutions pack passes.
 * Runs on the project's declaration and on a fixture declaration holding every kind of element. Every template
 * stays within its budget of CloudFormation's limits.
 */

import type { CfnElement, NestedStack, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { StageSettings } from '../../lib/config/stage-config';
import {
  DEFAULT_FUNCTION,
  DEFAULT_ROUTE_PATH,
  wiring as declaredWiring,
  deployedSpec,
  envNames,
  type FunctionSpec,
  type HttpRoute,
  type IndexSpec,
  type KeyAttribute,
  type LocalIndexSpec,
  SQS_MAX_MESSAGE_BYTES,
  type Wiring,
} from '../../lib/wiring';
import { richWiring } from './fixtures/rich-wiring';
import { devSettings, prodSettings, type SynthesizedStack, synthesize } from './synth';

type Json = Record<string, unknown>;
interface Resource {
  readonly Type: string;
  readonly Properties: Json;
}
interface Statement {
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: unknown;
}

const cases: readonly { name: string; wiring: Wiring; settings: () => StageSettings }[] = [
  {
    name: 'fixture declaration with every element kind (development stage)',
    wiring: richWiring,
    settings: devSettings,
  },
  { name: 'project declaration (production-like stage)', wiring: declaredWiring, settings: prodSettings },
];

const list = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);

/** HTTP and WebSocket functions check tokens; workers and schedules do not. */
const isAuthenticating = (key: string) => key.startsWith('http:') || key.startsWith('ws:');

/** Logical ids a CloudFormation value refers to (Ref and Fn::GetAtt), anywhere inside it. */
const referencedIds = (value: unknown, into = new Set<string>()): Set<string> => {
  if (Array.isArray(value)) for (const item of value) referencedIds(item, into);
  else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'Ref' && typeof inner === 'string') {
        if (!inner.startsWith('AWS::')) into.add(inner);
      } else if (key === 'Fn::GetAtt' && Array.isArray(inner) && typeof inner[0] === 'string')
        into.add(inner[0]);
      else referencedIds(inner, into);
    }
  }
  return into;
};

const attributeType = (key: KeyAttribute) => ({ AttributeName: key.name, AttributeType: key.type });
const projectionOf = (projection: IndexSpec['projection'] | LocalIndexSpec['projection']) =>
  projection === 'keys'
    ? { ProjectionType: 'KEYS_ONLY' }
    : projection === 'all'
      ? { ProjectionType: 'ALL' }
      : { ProjectionType: 'INCLUDE', NonKeyAttributes: [...projection] };

describe.each(cases)('NotifyStack from the $name', ({ wiring, settings }) => {
  let synth: SynthesizedStack;
  let resources: Record<string, Resource>;
  const logicalId = (construct: IConstruct) =>
    synth.stack.getLogicalId(construct.node.defaultChild as CfnElement);
  const ofType = (type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type);
  const functionId = (key: string) => {
    const fn = synth.stack.functions.get(key);
    if (!fn) throw new Error(`no function ${key}`);
    return logicalId(fn.function);
  };
  const tableId = (id: string) => logicalId(synth.stack.tables.table(id, 'test'));
  const queueIds = (id: string) => {
    const { queue, deadLetterQueue } = synth.stack.queues.get(id, 'test');
    return { queue: logicalId(queue), dlq: logicalId(deadLetterQueue) };
  };
  /** Every function of the declaration with the key NotifyStack files it under. */
  const declaredFunctions = (): [string, FunctionSpec][] => [
    ...wiring.httpRoutes.map((route): [string, FunctionSpec] => [`http:${route.id}`, route]),
    ...wiring.webSocketRoutes.map((route): [string, FunctionSpec] => [`ws:${route.routeKey}`, route]),
    ...wiring.workers.map((worker): [string, FunctionSpec] => [`worker:${worker.id}`, worker]),
    ...(wiring.busFunctions ?? []).map((fn): [string, FunctionSpec] => [`bus:${fn.id}`, fn]),
    ...wiring.recurringSchedules.map((schedule): [string, FunctionSpec] => [
      `schedule:${schedule.id}`,
      schedule,
    ]),
  ];
  const variablesOf = (key: string): Json => {
    const fn = resources[functionId(key)];
    if (!fn) throw new Error(`no function resource for ${key}`);
    return (fn.Properties.Environment as { Variables: Json }).Variables;
  };
  /** Statements of the policies attached to a function's role. */
  const statementsOf = (key: string): Statement[] => {
    const fn = synth.stack.functions.get(key);
    if (!fn) throw new Error(`no function ${key}`);
    const roleId = logicalId(fn.role);
    // A role whose grants outgrow the inline policy gets the rest in a managed OverflowPolicy (CDK splits it).
    return [...ofType('AWS::IAM::Policy'), ...ofType('AWS::IAM::ManagedPolicy')]
      .filter(([, policy]) => referencedIds(policy.Properties.Roles).has(roleId))
      .flatMap(([, policy]) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
  };

  beforeAll(() => {
    synth = synthesize(settings(), wiring);
    resources = synth.template.toJSON().Resources as Record<string, Resource>;
  });

  describe('declaration → template', () => {
    it('gives every HTTP route an /api/v1 route with a payload 2.0 Lambda integration of its own function', () => {
      for (const route of wiring.httpRoutes) {
        const integrations = synth.template.findResources('AWS::ApiGatewayV2::Integration', {
          Properties: {
            IntegrationType: 'AWS_PROXY',
            PayloadFormatVersion: '2.0',
            IntegrationUri: { 'Fn::GetAtt': [functionId(`http:${route.id}`), 'Arn'] },
          },
        });
        const [integrationId] = Object.keys(integrations);
        expect(integrationId, route.id).toBeDefined();
        synth.template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
          RouteKey: route.path === DEFAULT_ROUTE_PATH ? '$default' : `${route.method} /api/v1${route.path}`,
          Target: { 'Fn::Join': ['', ['integrations/', { Ref: integrationId }]] },
        });
      }
    });

    it('gives every WebSocket route key a route integrated with its own function', () => {
      if (wiring.webSocketRoutes.length === 0) {
        synth.template.resourceCountIs('AWS::ApiGatewayV2::Api', wiring.httpRoutes.length > 0 ? 1 : 0);
        return;
      }
      synth.template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
        ProtocolType: 'WEBSOCKET',
        RouteSelectionExpression: '$request.body.type',
      });
      synth.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', { StageName: 'ws', AutoDeploy: true });
      for (const route of wiring.webSocketRoutes) {
        const integrations = synth.template.findResources('AWS::ApiGatewayV2::Integration', {
          Properties: {
            IntegrationType: 'AWS_PROXY',
            IntegrationUri: Match.objectLike({
              'Fn::Join': Match.arrayWith([
                Match.arrayWith([{ 'Fn::GetAtt': [functionId(`ws:${route.routeKey}`), 'Arn'] }]),
              ]),
            }),
          },
        });
        const [integrationId] = Object.keys(integrations);
        expect(integrationId, route.routeKey).toBeDefined();
        synth.template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
          RouteKey: route.routeKey,
          Target: { 'Fn::Join': ['', ['integrations/', { Ref: integrationId }]] },
        });
      }
    });

    it('answers every mock WebSocket route in API Gateway: a MOCK integration whose response is the fixed frame', () => {
      for (const route of wiring.webSocketMockRoutes ?? []) {
        const integrations = synth.template.findResources('AWS::ApiGatewayV2::Integration', {
          Properties: { IntegrationType: 'MOCK', RequestTemplates: { $default: '{"statusCode":200}' } },
        });
        const routes = synth.template.findResources('AWS::ApiGatewayV2::Route', {
          Properties: { RouteKey: route.routeKey, RouteResponseSelectionExpression: '$default' },
        });
        const [[routeId, routeResource] = []] = Object.entries(routes);
        expect(routeId, route.routeKey).toBeDefined();
        const target = JSON.stringify(routeResource?.Properties?.Target);
        const integrationId = Object.keys(integrations).find((id) => target.includes(`"${id}"`));
        expect(integrationId, `${route.routeKey}: integrated with a MOCK integration`).toBeDefined();
        synth.template.hasResourceProperties('AWS::ApiGatewayV2::IntegrationResponse', {
          IntegrationId: { Ref: integrationId },
          IntegrationResponseKey: '$default',
          ResponseTemplates: { $default: JSON.stringify(route.reply) },
        });
        // The route response is what makes the route two-way: without it nothing goes back to the client.
        synth.template.hasResourceProperties('AWS::ApiGatewayV2::RouteResponse', {
          RouteId: { Ref: routeId },
          RouteResponseKey: '$default',
        });
        // No function serves it.
        expect(synth.stack.functions.has(`ws:${route.routeKey}`)).toBe(false);
      }
    });

    it('builds every function with the project defaults and its declared size', () => {
      for (const [key, spec] of declaredFunctions()) {
        synth.template.hasResource('AWS::Lambda::Function', {
          Properties: Match.objectLike({
            Runtime: 'nodejs24.x',
            Architectures: ['arm64'],
            Handler: 'index.handler',
            MemorySize: spec.memoryMb ?? DEFAULT_FUNCTION.memoryMb,
            Timeout: spec.timeoutSecs ?? DEFAULT_FUNCTION.timeoutSecs,
            TracingConfig: { Mode: 'Active' },
            Environment: {
              Variables: Match.objectLike({
                POWERTOOLS_SERVICE_NAME: 'notify',
                LOG_LEVEL: settings().logLevel,
                // Stacks are source-mapped when formatted, not by Node at every load (source-mapped-stacks.ts).
                NODE_OPTIONS: Match.absent(),
                NOTIFY_STAGE: settings().stage,
              }),
            },
            LoggingConfig: { LogGroup: { Ref: Match.anyValue() } },
          }),
        });
        const fnResource = resources[functionId(key)];
        if (!fnResource) throw new Error(`no function resource for ${key}`);
        const logGroupId = (fnResource.Properties.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup
          .Ref;
        expect(resources[logGroupId]?.Properties.RetentionInDays, key).toBe(settings().logRetentionDays);
        expect(fnResource.Properties.MemorySize, key).toBe(spec.memoryMb ?? DEFAULT_FUNCTION.memoryMb);
      }
    });

    it('feeds every worker from its declared queue with the declared batching and partial batch failures', () => {
      for (const worker of wiring.workers) {
        synth.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
          EventSourceArn: { 'Fn::GetAtt': [queueIds(worker.queue).queue, 'Arn'] },
          FunctionName: { Ref: functionId(`worker:${worker.id}`) },
          BatchSize: worker.batchSize,
          MaximumBatchingWindowInSeconds: worker.maxBatchingWindowSecs,
          FunctionResponseTypes: ['ReportBatchItemFailures'],
          ScalingConfig:
            worker.maxConcurrency === undefined
              ? Match.absent()
              : { MaximumConcurrency: worker.maxConcurrency },
        });
      }
    });

    it('creates every table as declared: keys, indexes, TTL, on-demand, PITR, encryption, removal policy', () => {
      const retained = settings().removalPolicy === 'retain';
      for (const table of wiring.tables) {
        const keys = [
          table.partitionKey,
          table.sortKey,
          ...(table.globalIndexes ?? []).flatMap((index) => [index.partitionKey, index.sortKey]),
          ...(table.localIndexes ?? []).map((index) => index.sortKey),
        ].filter((key): key is KeyAttribute => key !== undefined);
        const uniqueKeys = [...new Map(keys.map((key) => [key.name, key])).values()];
        synth.template.hasResource('AWS::DynamoDB::Table', {
          DeletionPolicy: retained ? 'Retain' : 'Delete',
          Properties: Match.objectLike({
            KeySchema: [
              { AttributeName: table.partitionKey.name, KeyType: 'HASH' },
              ...(table.sortKey ? [{ AttributeName: table.sortKey.name, KeyType: 'RANGE' }] : []),
            ],
            AttributeDefinitions: Match.arrayEquals(uniqueKeys.map(attributeType)),
            BillingMode: 'PAY_PER_REQUEST',
            PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
            SSESpecification: { SSEEnabled: true },
            DeletionProtectionEnabled: retained,
            TimeToLiveSpecification: table.ttlAttribute
              ? { AttributeName: table.ttlAttribute, Enabled: true }
              : Match.absent(),
            GlobalSecondaryIndexes: table.globalIndexes?.length
              ? Match.arrayEquals(
                  table.globalIndexes.map((index) => ({
                    IndexName: index.name,
                    KeySchema: [
                      { AttributeName: index.partitionKey.name, KeyType: 'HASH' },
                      ...(index.sortKey ? [{ AttributeName: index.sortKey.name, KeyType: 'RANGE' }] : []),
                    ],
                    Projection: projectionOf(index.projection),
                  })),
                )
              : Match.absent(),
            LocalSecondaryIndexes: table.localIndexes?.length
              ? Match.arrayEquals(
                  table.localIndexes.map((index) => ({
                    IndexName: index.name,
                    KeySchema: [
                      { AttributeName: table.partitionKey.name, KeyType: 'HASH' },
                      { AttributeName: index.sortKey.name, KeyType: 'RANGE' },
                    ],
                    Projection: projectionOf(index.projection),
                  })),
                )
              : Match.absent(),
          }),
        });
      }
    });

    it('gives every queue its own encrypted DLQ with the declared redrive and visibility timeout, TLS only', () => {
      for (const queue of wiring.queues) {
        const ids = queueIds(queue.id);
        expect(resources[ids.queue]?.Properties).toMatchObject({
          VisibilityTimeout: queue.visibilityTimeoutSecs,
          SqsManagedSseEnabled: true,
          RedrivePolicy: {
            deadLetterTargetArn: { 'Fn::GetAtt': [ids.dlq, 'Arn'] },
            maxReceiveCount: queue.maxReceiveCount,
          },
        });
        expect(resources[ids.dlq]?.Properties).toMatchObject({ SqsManagedSseEnabled: true });
        for (const id of [ids.queue, ids.dlq]) {
          synth.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
            Queues: Match.arrayWith([{ Ref: id }]),
            PolicyDocument: {
              Statement: Match.arrayWith([
                Match.objectLike({
                  Effect: 'Deny',
                  Action: 'sqs:*',
                  Condition: { Bool: { 'aws:SecureTransport': 'false' } },
                }),
              ]),
            },
          });
        }
      }
    });

    it('routes every bus rule to its queue, or invokes its bus function, with the declared pattern and a DLQ', () => {
      for (const rule of wiring.busRules) {
        const fn = (wiring.busFunctions ?? []).find(
          (candidate) => 'targetFunction' in rule && candidate.id === rule.targetFunction,
        );
        if ('targetFunction' in rule && !fn) throw new Error(`bus rule ${rule.id}: no bus function`);
        const ids =
          'targetQueue' in rule
            ? queueIds(rule.targetQueue)
            : {
                queue: functionId(`bus:${fn?.id}`),
                dlq: logicalId(
                  synth.stack.queues.failureDestination(fn?.deadLetterQueue ?? '', 'test').deadLetterQueue,
                ),
              };
        synth.template.hasResourceProperties('AWS::Events::Rule', {
          EventBusName: { Ref: logicalId(synth.stack.eventBus.bus) },
          EventPattern: rule.pattern,
          Description: rule.description,
          Targets: [
            Match.objectLike({
              Arn: { 'Fn::GetAtt': [ids.queue, 'Arn'] },
              DeadLetterConfig: { Arn: { 'Fn::GetAtt': [ids.dlq, 'Arn'] } },
              // A function target: EventBridge retries what Lambda refuses for a day, then the DLQ.
              ...(fn ? { RetryPolicy: { MaximumRetryAttempts: 185, MaximumEventAgeInSeconds: 86_400 } } : {}),
            }),
          ],
        });
        // The target's DLQ lets EventBridge send what it could not deliver, and only for a rule's own events.
        synth.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
          Queues: Match.arrayWith([{ Ref: ids.dlq }]),
          PolicyDocument: {
            Statement: Match.arrayWith([
              Match.objectLike({
                Effect: 'Allow',
                Action: 'sqs:SendMessage',
                Principal: { Service: 'events.amazonaws.com' },
                Condition: { ArnEquals: { 'aws:SourceArn': Match.anyValue() } },
              }),
            ]),
          },
        });
        if (!fn) continue;
        // EventBridge may invoke it, and only from this bus's rules.
        synth.template.hasResourceProperties('AWS::Lambda::Permission', {
          Action: 'lambda:InvokeFunction',
          FunctionName: { 'Fn::GetAtt': [functionId(`bus:${fn.id}`), 'Arn'] },
          Principal: 'events.amazonaws.com',
        });
      }
    });

    it('gives every bus function Lambda’s retries, event age and on-failure destination (the DLQ, alarmed)', () => {
      expect(wiring.busFunctions?.length ?? 0).toBeGreaterThan(0);
      for (const fn of wiring.busFunctions ?? []) {
        const dlq = logicalId(
          synth.stack.queues.failureDestination(fn.deadLetterQueue, 'test').deadLetterQueue,
        );
        synth.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
          FunctionName: { Ref: functionId(`bus:${fn.id}`) },
          Qualifier: '$LATEST',
          MaximumRetryAttempts: fn.retryAttempts,
          MaximumEventAgeInSeconds: fn.maxEventAgeSecs,
          DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [dlq, 'Arn'] } } },
        });
        expect(resources[dlq]?.Properties).toMatchObject({
          SqsManagedSseEnabled: true,
          MessageRetentionPeriod: 14 * 24 * 3600,
        });
        // Lambda sends the record with the function's role.
        expect(
          statementsOf(`bus:${fn.id}`).some(
            (statement) =>
              [statement.Action].flat().includes('sqs:SendMessage') &&
              JSON.stringify(statement.Resource).includes(dlq),
          ),
          fn.id,
        ).toBe(true);
        // No event source: nothing polls for it.
        const sources = Object.values(resources).filter(
          (resource) =>
            resource.Type === 'AWS::Lambda::EventSourceMapping' &&
            JSON.stringify(resource.Properties).includes(functionId(`bus:${fn.id}`)),
        );
        expect(sources, fn.id).toEqual([]);
      }
    });

    it('lets a worker declaring invokedAsync be invoked by exactly the functions that declare it, failing into its queue’s DLQ', () => {
      for (const worker of wiring.workers.filter((candidate) => candidate.invokedAsync)) {
        synth.template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
          FunctionName: { Ref: functionId(`worker:${worker.id}`) },
          Qualifier: '$LATEST',
          MaximumRetryAttempts: worker.invokedAsync?.retryAttempts,
          MaximumEventAgeInSeconds: worker.invokedAsync?.maxEventAgeSecs,
          DestinationConfig: {
            OnFailure: { Destination: { 'Fn::GetAtt': [queueIds(worker.queue).dlq, 'Arn'] } },
          },
        });
      }
      const target = (worker: string) => ({ 'Fn::GetAtt': [functionId(`worker:${worker}`), 'Arn'] });
      for (const [key, spec] of declaredFunctions()) {
        const invokeStatements = statementsOf(key).filter((statement) =>
          list(statement.Action).some((action) => action.startsWith('lambda:')),
        );
        // One action on the function's own ARN: no version, alias or other function.
        expect(
          invokeStatements.map((statement) => ({ Action: statement.Action, Resource: statement.Resource })),
          key,
        ).toEqual(
          (spec.invokes ?? []).map((invoked) => ({
            Action: 'lambda:InvokeFunction',
            Resource: target(invoked),
          })),
        );
      }
    });

    it('archives the events published with archive: true', () => {
      synth.template.hasResourceProperties('AWS::Events::Archive', {
        SourceArn: { 'Fn::GetAtt': [logicalId(synth.stack.eventBus.bus), 'Arn'] },
        EventPattern: { detail: { archive: [true] } },
        // 0 keeps archived events indefinitely.
        RetentionDays: settings().archiveRetentionDays,
      });
    });

    it('invokes every recurring schedule’s function at its declared rate', () => {
      for (const schedule of wiring.recurringSchedules) {
        const unit = schedule.everyMinutes === 1 ? 'minute' : 'minutes';
        synth.template.hasResourceProperties('AWS::Scheduler::Schedule', {
          ScheduleExpression: `rate(${schedule.everyMinutes} ${unit})`,
          Target: Match.objectLike({ Arn: { 'Fn::GetAtt': [functionId(`schedule:${schedule.id}`), 'Arn'] } }),
        });
      }
    });

    it('lets the one-time scheduler role send to every declared schedule target queue and nothing else', () => {
      const scheduling = synth.stack.scheduling;
      const needed =
        wiring.scheduleTargets.length > 0 || declaredFunctions().some(([, spec]) => spec.schedules);
      expect(scheduling !== undefined).toBe(needed);
      if (!scheduling) return;
      const roleId = logicalId(scheduling.role);
      synth.template.hasResourceProperties('AWS::IAM::Role', {
        AssumeRolePolicyDocument: {
          Statement: [Match.objectLike({ Principal: { Service: 'scheduler.amazonaws.com' } })],
        },
      });
      const statements = ofType('AWS::IAM::Policy')
        .filter(([, policy]) => referencedIds(policy.Properties.Roles).has(roleId))
        .flatMap(([, policy]) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
      const queues = new Set(statements.flatMap((statement) => [...referencedIds(statement.Resource)]));
      expect(queues).toEqual(
        new Set(wiring.scheduleTargets.map((target) => queueIds(target.targetQueue).queue)),
      );
    });

    it('outputs the REST base URL, the WebSocket URL and the bus name', () => {
      const outputs = synth.template.toJSON().Outputs as Record<string, { Value: unknown }>;
      expect(JSON.stringify(outputs.HttpApiUrl?.Value)).toContain('api/v1');
      expect(outputs.EventBusName?.Value).toEqual({ Ref: logicalId(synth.stack.eventBus.bus) });
      expect(outputs.WebSocketUrl !== undefined).toBe(wiring.webSocketRoutes.length > 0);
    });
  });

  describe('template → declaration (nothing undeclared)', () => {
    it('has exactly the declared number of routes, tables, queues, mappings, rules, schedules and functions', () => {
      synth.template.resourceCountIs(
        'AWS::ApiGatewayV2::Route',
        wiring.httpRoutes.length + wiring.webSocketRoutes.length + (wiring.webSocketMockRoutes ?? []).length,
      );
      synth.template.resourceCountIs('AWS::DynamoDB::Table', wiring.tables.length);
      synth.template.resourceCountIs(
        'AWS::SQS::Queue',
        2 * wiring.queues.length + synth.stack.queues.failureDestinations.length,
      );
      // Every queue and DLQ states its MaximumMessageSize: the limit the local SQS enforces.
      const queues = Object.values(synth.template.findResources('AWS::SQS::Queue'));
      expect(queues.map((queue) => queue.Properties?.MaximumMessageSize)).toEqual(
        queues.map(() => SQS_MAX_MESSAGE_BYTES),
      );
      synth.template.resourceCountIs('AWS::Lambda::EventSourceMapping', wiring.workers.length);
      synth.template.resourceCountIs('AWS::Events::Rule', wiring.busRules.length);
      synth.template.resourceCountIs('AWS::Scheduler::Schedule', wiring.recurringSchedules.length);
      synth.template.resourceCountIs('AWS::Lambda::Function', declaredFunctions().length);
      synth.template.resourceCountIs('AWS::Events::EventBus', 1);
      const usesWebhookKey = declaredFunctions().some(([, spec]) => spec.webhookSecretKey);
      // The alarm topic's key is in the monitoring nested stack (test/cdk/operations.test.ts).
      synth.template.resourceCountIs('AWS::KMS::Key', usesWebhookKey ? 1 : 0);
      if (usesWebhookKey) synth.template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    });
  });

  describe('least privilege', () => {
    it('grants each function exactly the resources its declaration names, with write actions only where declared', () => {
      for (const [key, declared] of declaredFunctions()) {
        // With replay protection on, token-verifying functions also write the tokenReplay table (deployedSpec).
        const spec = deployedSpec(declared, settings().authEnv, { withAuth: isAuthenticating(key) });
        const fn = synth.stack.functions.get(key);
        if (!fn) throw new Error(`no function ${key}`);
        const expected = new Set<string>([logicalId(fn.logGroup)]);
        const writes = new Set(spec.writes ?? []);
        for (const table of [...(spec.reads ?? []), ...writes]) expected.add(tableId(table));
        for (const queue of spec.sendsTo ?? []) expected.add(queueIds(queue).queue);
        if (key.startsWith('worker:')) {
          const worker = wiring.workers.find((candidate) => `worker:${candidate.id}` === key);
          if (worker) expected.add(queueIds(worker.queue).queue);
          // Invoked asynchronously: Lambda sends the on-failure record to the queue's DLQ with its role.
          if (worker?.invokedAsync) expected.add(queueIds(worker.queue).dlq);
        }
        for (const invoked of spec.invokes ?? []) expected.add(functionId(`worker:${invoked}`));
        const busFunction = (wiring.busFunctions ?? []).find((candidate) => `bus:${candidate.id}` === key);
        // Lambda sends the on-failure record with the function's role.
        if (busFunction) {
          expected.add(
            logicalId(
              synth.stack.queues.failureDestination(busFunction.deadLetterQueue, 'test').deadLetterQueue,
            ),
          );
        }
        if (spec.putsEvents) expected.add(logicalId(synth.stack.eventBus.bus));
        if (spec.managesConnections && synth.stack.webSocketApi)
          expected.add(logicalId(synth.stack.webSocketApi.api));
        if (spec.schedules && synth.stack.scheduling) expected.add(logicalId(synth.stack.scheduling.role));
        if (spec.webhookSecretKey && synth.stack.webhookSecretKey)
          expected.add(logicalId(synth.stack.webhookSecretKey));
        if (spec.cursorKey && synth.stack.cursorKey) expected.add(logicalId(synth.stack.cursorKey));
        if (isAuthenticating(key) && synth.stack.hs256Secret)
          expected.add(logicalId(synth.stack.hs256Secret));

        const statements = statementsOf(key);
        const granted = new Set(statements.flatMap((statement) => [...referencedIds(statement.Resource)]));
        expect(granted, key).toEqual(expected);

        for (const table of spec.reads ?? []) {
          if (writes.has(table)) continue;
          const onTable = statements.filter((statement) =>
            referencedIds(statement.Resource).has(tableId(table)),
          );
          const actions = onTable.flatMap((statement) => list(statement.Action));
          expect(actions, `${key} reads ${table}`).toContain('dynamodb:Query');
          expect(actions, `${key} only reads ${table}`).not.toContain('dynamodb:PutItem');
        }
        for (const table of writes) {
          const onTable = statements.filter((statement) =>
            referencedIds(statement.Resource).has(tableId(table)),
          );
          expect(
            onTable.flatMap((statement) => list(statement.Action)),
            `${key} writes ${table}`,
          ).toContain('dynamodb:PutItem');
        }
        if (spec.webhookSecretKey) {
          const key = synth.stack.webhookSecretKey;
          if (!key) throw new Error('no webhook secret key');
          const onKey = statements.filter((statement) =>
            referencedIds(statement.Resource).has(logicalId(key)),
          );
          const expectedAction = spec.webhookSecretKey === 'encrypt' ? 'kms:GenerateDataKey' : 'kms:Decrypt';
          expect(
            onKey.flatMap((statement) => list(statement.Action)),
            key.node.path,
          ).toEqual([expectedAction]);
        }
        if (spec.schedules) {
          const actions = statements.flatMap((statement) => list(statement.Action));
          expect(actions).toEqual(
            expect.arrayContaining(['scheduler:CreateSchedule', 'scheduler:DeleteSchedule', 'iam:PassRole']),
          );
        }
      }
    });

    it('tells each function where its declared resources are, and nothing more', () => {
      for (const [key, declared] of declaredFunctions()) {
        const spec = deployedSpec(declared, settings().authEnv, { withAuth: isAuthenticating(key) });
        const variables = variablesOf(key);
        const resourceNames = Object.keys(variables).filter(
          (name) => name.startsWith('NOTIFY_') && name !== envNames.stage,
        );
        const expected = new Set<string>();
        for (const table of [...(spec.reads ?? []), ...(spec.writes ?? [])])
          expected.add(envNames.tableName(table));
        // The shard count of the connections' index (scale.connection_shards) goes with that table.
        if ([...(spec.reads ?? []), ...(spec.writes ?? [])].includes('wsConnections')) {
          expected.add(envNames.connectionShards);
        }
        // When rooms get presence summaries (scale.presence) goes with writing presence.
        if ((spec.writes ?? []).includes('presence')) {
          expected.add(envNames.presenceAnnounceMax);
          expected.add(envNames.presenceSummarySecs);
        }
        // Likewise the shard count of the webhook deliveries (scale.webhook_delivery_shards).
        if ([...(spec.reads ?? []), ...(spec.writes ?? [])].includes('webhookDeliveries')) {
          expected.add(envNames.webhookDeliveryShards);
        }
        for (const queue of spec.sendsTo ?? []) {
          expected.add(envNames.queueUrl(queue));
          expected.add(envNames.queueArn(queue));
        }
        for (const invoked of spec.invokes ?? []) expected.add(envNames.functionArn(invoked));
        if (spec.putsEvents) expected.add(envNames.busName);
        if (spec.managesConnections) expected.add(envNames.wsCallbackUrl);
        if (spec.webhookSecretKey) expected.add(envNames.webhookKmsKeyId);
        if (spec.cursorKey) expected.add(envNames.cursorKeySecretArn);
        if (isAuthenticating(key) && settings().hs256Secret) expected.add(envNames.hs256SecretArn);
        // An HTTP route's access rule, from the same declaration (lambdas/core/http/route.ts reads it).
        if ('access' in declared) {
          expected.add(envNames.routeAccess);
          expect(JSON.parse(String(variables[envNames.routeAccess])), key).toEqual({
            id: (declared as HttpRoute).id,
            access: (declared as HttpRoute).access,
          });
        }
        if (spec.schedules) {
          expected.add(envNames.schedulerRoleArn);
          expected.add(envNames.scheduleGroup);
          for (const target of wiring.scheduleTargets) expected.add(envNames.queueArn(target.targetQueue));
        }
        expect(new Set(resourceNames), key).toEqual(expected);
        for (const table of [...(spec.reads ?? []), ...(spec.writes ?? [])]) {
          expect(variables[envNames.tableName(table)]).toEqual({ Ref: tableId(table) });
        }
        for (const invoked of spec.invokes ?? []) {
          expect(variables[envNames.functionArn(invoked)]).toEqual({
            'Fn::GetAtt': [functionId(`worker:${invoked}`), 'Arn'],
          });
        }
        if (spec.managesConnections) {
          expect(JSON.stringify(variables[envNames.wsCallbackUrl])).toMatch(
            /^\{"Fn::Join":\["",\["https:\/\/",/,
          );
          expect(JSON.stringify(variables[envNames.wsCallbackUrl])).toContain('/ws');
        }
      }
    });

    it('uses no wildcard action, and a "*" resource only where AWS offers nothing narrower', () => {
      // The only "*" resource AWS mandates here: X-Ray trace uploads have no resource-level permissions.
      const starResourceAllowed = new Set(['xray:PutTraceSegments', 'xray:PutTelemetryRecords']);
      const policies = ofType('AWS::IAM::Policy');
      expect(policies.length).toBeGreaterThan(0);
      for (const [policyId, policy] of policies) {
        for (const statement of (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement) {
          if (statement.Effect !== 'Allow') continue;
          for (const action of list(statement.Action)) {
            expect(action, policyId).not.toMatch(/^\*$|:\*$/);
          }
          if (list(statement.Resource).includes('*')) {
            for (const action of list(statement.Action))
              expect(starResourceAllowed, `${policyId} ${action}`).toContain(action);
          }
        }
      }
      for (const [roleId, role] of ofType('AWS::IAM::Role')) {
        expect(role.Properties.Policies, roleId).toBeUndefined();
        expect(role.Properties.ManagedPolicyArns, roleId).toBeUndefined();
      }
    });
  });

  describe('settings', () => {
    it('passes the auth settings to HTTP and WebSocket functions, and the HS256 key only as a secret ARN', () => {
      const keys = declaredFunctions().filter(([key]) => isAuthenticating(key));
      expect(keys.length).toBeGreaterThan(0);
      for (const [key] of keys) {
        const variables = variablesOf(key);
        for (const [name, value] of Object.entries(settings().authEnv))
          expect(variables[name], `${key} ${name}`).toBe(value);
        // Neither the key nor a deploy-time dynamic reference to it: the function reads it at cold start.
        expect(variables.SERVICE__AUTH__HS256_SECRET, key).toBeUndefined();
        expect(JSON.stringify(variables)).not.toContain('{{resolve:');
        const secret = synth.stack.hs256Secret;
        if (settings().hs256Secret === undefined) {
          expect(secret).toBeUndefined();
          expect(variables[envNames.hs256SecretArn], key).toBeUndefined();
          continue;
        }
        if (!secret) throw new Error('no HS256 secret');
        expect(variables[envNames.hs256SecretArn], key).toEqual({ Ref: logicalId(secret) });
        expect(
          statementsOf(key).filter((statement) => referencedIds(statement.Resource).has(logicalId(secret))),
        ).toEqual([
          expect.objectContaining({
            Effect: 'Allow',
            Action: ['secretsmanager:GetSecretValue', 'secretsmanager:DescribeSecret'],
          }),
        ]);
      }
    });
  });

  describe('cdk-nag AwsSolutions', () => {
    it('reports no finding that is not acknowledged', () => {
      const report = new AwsSolutionsChecks(synth.app).validateScope(synth.stack);
      const findings = report.violations.map(
        (violation) => `${violation.ruleName}: ${violation.description}`,
      );
      expect(findings).toEqual([]);
      expect(Annotations.fromStack(synth.stack).findError('*', Match.anyValue())).toEqual([]);
    });

    it('gives every acknowledgement a written reason', () => {
      const acknowledgements = synth.stack.node
        .findAll()
        .flatMap((construct) => construct.node.metadata)
        .filter((entry) => entry.type === 'aws:cdk:acknowledged-rules')
        .flatMap((entry) => Object.entries(entry.data as Record<string, string>));
      expect(acknowledgements.length).toBeGreaterThan(0);
      for (const [id, reason] of acknowledgements) {
        // aws-cdk-lib records acknowledgements under its annotation namespace.
        expect(id).toMatch(/^Annotation::AwsSolutions-/);
        expect(reason.length, id).toBeGreaterThan(40);
      }
    });
  });
});

describe('the paging cursor key', () => {
  it('comes from the generated HS256 secret on a development stage (one secret fewer), else from its own', () => {
    for (const [settings, sharesHs256] of [
      [devSettings, true],
      [prodSettings, false],
    ] as const) {
      const { stack, template: synthesized } = synthesize(settings(), declaredWiring);
      const source = stack.cursorKey;
      if (!source) throw new Error('no cursor key secret');
      expect(source === stack.hs256Secret).toBe(sharesHs256);
      const template = synthesized.toJSON() as { Resources: Record<string, Resource> };
      const logicalId = (construct: IConstruct) =>
        stack.getLogicalId(construct.node.defaultChild as CfnElement);
      const secretIds = Object.entries(template.Resources)
        .filter(([, resource]) => resource.Type === 'AWS::SecretsManager::Secret')
        .map(([id]) => id);
      expect(secretIds).toContain(logicalId(source));
      expect(secretIds.some((id) => id.startsWith('CursorKey'))).toBe(!sharesHs256);
      const cursorFunctions = [...stack.functions].filter(([key]) =>
        declaredWiring.httpRoutes.some((route) => route.cursorKey && key === `http:${route.id}`),
      );
      expect(cursorFunctions.length).toBeGreaterThan(0);
      for (const [key, fn] of cursorFunctions) {
        const resource = template.Resources[logicalId(fn.function)];
        if (!resource) throw new Error(`no function resource for ${key}`);
        const variables = (resource.Properties.Environment as { Variables: Json }).Variables;
        expect(variables[envNames.cursorKeySecretArn], key).toEqual({ Ref: logicalId(source) });
      }
    }
  }, 120_000);
});

/**
 * CloudFormation refuses a template of more than 500 resources, 200 parameters or 200 outputs. The service is
 * split so that every template stays well under them: each area's functions in a nested stack of that area,
 * the alarms in the monitoring one, and what areas share in the parent. The budgets below leave room for a dozen
 * more routes and workers in any one area (a route adds three resources to the parent: route, integration,
 * permission; and four to its area: function, role, policy, log group; and one alarm to monitoring).
 */
const BUDGETS = { parent: 300, area: 150, monitoring: 200, parameters: 150, outputs: 150 } as const;

interface TemplateJson {
  readonly Resources: Record<string, { readonly Type: string }>;
  readonly Parameters?: Record<string, unknown>;
  readonly Outputs?: Record<string, unknown>;
}

const templateOf = (stack: Stack): TemplateJson => Template.fromStack(stack).toJSON() as TemplateJson;

const expectWithinBudget = (name: string, stack: Stack, resourceBudget: number) => {
  const template = templateOf(stack);
  const resources = Object.keys(template.Resources).length;
  expect(resources, `${name}: ${resources} resources, budget ${resourceBudget}`).toBeLessThanOrEqual(
    resourceBudget,
  );
  const parameters = Object.keys(template.Parameters ?? {}).length;
  expect(parameters, `${name}: ${parameters} parameters`).toBeLessThanOrEqual(BUDGETS.parameters);
  const outputs = Object.keys(template.Outputs ?? {}).length;
  expect(outputs, `${name}: ${outputs} outputs`).toBeLessThanOrEqual(BUDGETS.outputs);
};

describe("the templates within CloudFormation's limits", () => {
  describe.each([
    ['development stage', devSettings],
    ['production-like stage (full monitoring)', prodSettings],
  ])('%s', (_name, settings) => {
    let synth: SynthesizedStack;
    beforeAll(() => {
      synth = synthesize(settings());
    });

    it('keeps the parent, every area stack and the monitoring stack within their budgets', () => {
      expectWithinBudget('parent', synth.stack, BUDGETS.parent);
      expect([...synth.stack.functionStacks.keys()]).toEqual(Object.keys(declaredWiring.areas ?? {}));
      for (const [area, stack] of synth.stack.functionStacks) expectWithinBudget(area, stack, BUDGETS.area);
      expectWithinBudget('monitoring', synth.stack.monitoring.nestedStack, BUDGETS.monitoring);
    });

    it('holds no function in the parent: each one is in the nested stack of the area declaring it', () => {
      synth.parentTemplate.resourceCountIs('AWS::Lambda::Function', 0);
      for (const [area, part] of Object.entries(declaredWiring.areas ?? {})) {
        const stack = synth.stack.functionStacks.get(area) as NestedStack;
        const declared =
          (part.httpRoutes?.length ?? 0) +
          (part.webSocketRoutes?.length ?? 0) +
          (part.workers?.length ?? 0) +
          (part.busFunctions?.length ?? 0) +
          (part.recurringSchedules?.length ?? 0);
        Template.fromStack(stack).resourceCountIs('AWS::Lambda::Function', declared);
      }
    });
  });

  describe('a route added to an area', () => {
    it('lands in the nested stack of that area, its API route in the parent', () => {
      const areas = declaredWiring.areas ?? {};
      const added: HttpRoute = {
        id: 'webhooks.added',
        method: 'GET',
        path: '/webhooks-added',
        handler: 'lambdas/handlers/http/health/live.ts',
        access: { users: 'any' },
      };
      const webhooks = { ...areas.webhooks, httpRoutes: [...(areas.webhooks?.httpRoutes ?? []), added] };
      const grown: Wiring = {
        ...declaredWiring,
        httpRoutes: [...declaredWiring.httpRoutes, added],
        areas: { ...areas, webhooks },
      };
      const synth = synthesize(devSettings(), grown);
      const fn = synth.stack.functions.get('http:webhooks.added');
      expect(fn && synth.stack.functionStacks.get('webhooks')?.node.findAll().includes(fn)).toBe(true);
      synth.parentTemplate.hasResourceProperties('AWS::ApiGatewayV2::Route', {
        RouteKey: 'GET /api/v1/webhooks-added',
      });
      // A whole synth in the test itself: as long as a beforeAll's.
    }, 90_000);
  });
});
