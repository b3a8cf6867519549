/**
 * The realtime timers and the heartbeat as the stack deploys them (docs/realtime.md, heartbeat and silence):
 * a schedule every minute that queues the sweeps, one worker per shard message with bounded concurrency, the
 * index the sweep judges connections by, and a `heartbeat` route that API Gateway answers without a function.
 */
import type { CfnElement } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { prodSettings, type SynthesizedStack, synthesize } from './synth';

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

describe('realtime timers and heartbeat in the template', () => {
  let synth: SynthesizedStack;
  let resources: Resources;
  const logicalId = (construct: IConstruct) =>
    synth.stack.getLogicalId(construct.node.defaultChild as CfnElement);
  const functionId = (key: string) => {
    const fn = synth.stack.functions.get(key);
    if (!fn) throw new Error(`no function ${key}`);
    return logicalId(fn.function);
  };
  const queueId = (id: string) => logicalId(synth.stack.queues.get(id, 'test').queue);

  beforeAll(() => {
    synth = synthesize(prodSettings());
    resources = synth.template.toJSON().Resources as Resources;
  });

  it('fires ws.sweeper every minute; it may read the connections and send to wsSweep, nothing more', () => {
    synth.template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 minute)',
      Target: Match.objectLike({ Arn: { 'Fn::GetAtt': [functionId('schedule:ws.sweeper'), 'Arn'] } }),
    });
    const role = logicalId(synth.stack.functions.get('schedule:ws.sweeper')?.role as IConstruct);
    const statements = Object.values(resources)
      .filter((resource) => resource.Type === 'AWS::IAM::Policy')
      .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(`"${role}"`))
      .flatMap(
        (policy) => (policy.Properties.PolicyDocument as { Statement: { Action: unknown }[] }).Statement,
      );
    const actions = statements.flatMap((statement) => [statement.Action].flat().map(String));
    // It writes no table and touches no connection: it only looks which shards are due and queues the sweeps.
    expect(actions.filter((action) => /^dynamodb:(Put|Update|Delete|BatchWrite)/.test(action))).toEqual([]);
    expect(actions.filter((action) => action.startsWith('execute-api:'))).toEqual([]);
    expect(actions).toContain('sqs:SendMessage');
    expect(JSON.stringify(statements)).toContain(`"${queueId('wsSweep')}"`);
  });

  it('sweeps each shard message in its own invocation, at most 16 at once, with a DLQ behind the queue', () => {
    synth.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [queueId('wsSweep'), 'Arn'] },
      FunctionName: { Ref: functionId('worker:ws.sweepShard') },
      BatchSize: 1,
      ScalingConfig: { MaximumConcurrency: 16 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    synth.template.hasResourceProperties('AWS::SQS::Queue', {
      // 6 × the worker's 60 s timeout.
      VisibilityTimeout: 360,
      RedrivePolicy: Match.objectLike({ maxReceiveCount: 3 }),
    });
  });

  it('projects into byShard what the sweep judges a connection by', () => {
    synth.template.hasResourceProperties('AWS::DynamoDB::Table', {
      GlobalSecondaryIndexes: [
        Match.objectLike({
          IndexName: 'byShard',
          Projection: {
            ProjectionType: 'INCLUDE',
            NonKeyAttributes: ['user_id', 'connected_at', 'token_expires_at'],
          },
        }),
      ],
    });
  });

  it('answers heartbeat with a MOCK integration and a route response, no function', () => {
    expect(synth.stack.functions.has('ws:heartbeat')).toBe(false);
    const [routeId] = Object.entries(resources).find(
      ([, resource]) =>
        resource.Type === 'AWS::ApiGatewayV2::Route' && resource.Properties.RouteKey === 'heartbeat',
    ) ?? [undefined];
    expect(routeId).toBeDefined();
    const route = resources[routeId as string];
    const target = JSON.stringify(route?.Properties.Target);
    const [integrationId, integration] =
      Object.entries(resources).find(([id]) => target.includes(`"${id}"`)) ?? [];
    expect(integration?.Properties).toMatchObject({ IntegrationType: 'MOCK' });
    synth.template.hasResourceProperties('AWS::ApiGatewayV2::IntegrationResponse', {
      IntegrationId: { Ref: integrationId },
      ResponseTemplates: { $default: '{"type":"heartbeat.ack"}' },
    });
    synth.template.hasResourceProperties('AWS::ApiGatewayV2::RouteResponse', {
      RouteId: { Ref: routeId },
      RouteResponseKey: '$default',
    });
  });
});
