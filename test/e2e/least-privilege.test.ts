/**
 * Local least privilege agrees with AWS's, three ways: for each fixture function and each call, what its
 * declaration grants (lib/wiring/grants.ts), what the IAM statements of the synthesized template allow (read
 * the way IAM reads them: action and resource patterns) and what the local runtime lets through must be the
 * same. The calls are made by the function itself, with its own credentials, over the real SDK.
 */
import { DeleteItemCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import type { CfnElement } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dynamoDb } from '../../lambdas/core/clients';
import { WEBSOCKET_STAGE_NAME } from '../../lib/constructs/apis';
import {
  allowsTableAction,
  deployedSpec,
  envNames,
  type FunctionSpec,
  functionGrants,
  type HttpRoute,
  type Wiring,
} from '../../lib/wiring';
import { devSettings, type SynthesizedStack, synthesize } from '../cdk/synth';
import { type Runtime, startTestRuntime } from '../support/runtime';

const PROBE = 'test/support/fixtures/handlers/grant-probe.ts';
const probe = (id: string, grants: Partial<FunctionSpec>): HttpRoute => ({
  id,
  method: 'GET',
  path: `/${id}`,
  handler: PROBE,
  access: { public: true },
  ...grants,
});

const wiring: Wiring = {
  httpRoutes: [
    probe('reader', { reads: ['things'] }),
    probe('writer', { writes: ['things'] }),
    probe('other', { writes: ['others'] }),
    probe('connections', { managesConnections: true }),
    probe('nothing', {}),
  ],
  webSocketRoutes: [{ routeKey: '$connect', handler: 'test/support/fixtures/handlers/ws-connect.ts' }],
  tables: [
    {
      id: 'things',
      partitionKey: { name: 'pk', type: 'S' },
      globalIndexes: [{ name: 'byOwner', partitionKey: { name: 'owner', type: 'S' }, projection: 'keys' }],
      purpose: 'fixture',
    },
    { id: 'others', partitionKey: { name: 'pk', type: 'S' }, purpose: 'fixture' },
  ],
  queues: [],
  workers: [],
  busRules: [],
  recurringSchedules: [],
  scheduleTargets: [],
};

/** What IAM checks for each probe call, as AWS documents it (Using IAM with DynamoDB transactions, …). */
const DYNAMODB_CALLS: Readonly<Record<string, { action: string; on: 'table' | 'index' }>> = {
  GetItem: { action: 'dynamodb:GetItem', on: 'table' },
  Query: { action: 'dynamodb:Query', on: 'table' },
  QueryIndex: { action: 'dynamodb:Query', on: 'index' },
  Scan: { action: 'dynamodb:Scan', on: 'table' },
  ScanIndex: { action: 'dynamodb:Scan', on: 'index' },
  BatchGetItem: { action: 'dynamodb:BatchGetItem', on: 'table' },
  TransactGetItems: { action: 'dynamodb:GetItem', on: 'table' },
  PutItem: { action: 'dynamodb:PutItem', on: 'table' },
  UpdateItem: { action: 'dynamodb:UpdateItem', on: 'table' },
  DeleteItem: { action: 'dynamodb:DeleteItem', on: 'table' },
  BatchWriteItem: { action: 'dynamodb:BatchWriteItem', on: 'table' },
  TransactPut: { action: 'dynamodb:PutItem', on: 'table' },
  TransactConditionCheck: { action: 'dynamodb:ConditionCheckItem', on: 'table' },
};
const CONNECTION_CALLS = {
  PostToConnection: 'POST',
  GetConnection: 'GET',
  DeleteConnection: 'DELETE',
} as const;

interface Statement {
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource: unknown;
}

const REGION = 'us-east-1';
const ACCOUNT = '000000000000';

const asList = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);
const glob = (pattern: string, value: string) =>
  new RegExp(
    `^${pattern
      .split('')
      .map((char) => (char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
      .join('')}$`,
    'i',
  ).test(value);

describe('least privilege: declaration → template → local enforcement', () => {
  let synth: SynthesizedStack;
  let runtime: Runtime;
  const logicalId = (construct: IConstruct) =>
    synth.stack.getLogicalId(construct.node.defaultChild as CfnElement);

  /** A template value as a string, with each table's ARN written `…:table/<logical id>` (as the requests below). */
  const resolve = (value: unknown): string => {
    if (typeof value === 'string') return value;
    const node = value as Record<string, unknown>;
    if ('Ref' in node) {
      const ref = String(node.Ref);
      return (
        (
          { 'AWS::Partition': 'aws', 'AWS::Region': REGION, 'AWS::AccountId': ACCOUNT } as Record<
            string,
            string
          >
        )[ref] ?? ref
      );
    }
    if ('Fn::GetAtt' in node) {
      const [id, attribute] = node['Fn::GetAtt'] as [string, string];
      return attribute === 'Arn' ? `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${id}` : `${id}.${attribute}`;
    }
    if ('Fn::Join' in node) {
      const [separator, parts] = node['Fn::Join'] as [string, unknown[]];
      return parts.map(resolve).join(separator);
    }
    throw new Error(`cannot resolve ${JSON.stringify(value)}`);
  };

  /** Whether the template's policies for a function allow `action` on `resource`, read as IAM reads them. */
  const templateAllows = (key: string, action: string, resource: string): boolean => {
    const fn = synth.stack.functions.get(key);
    if (!fn) throw new Error(`no function ${key}`);
    const role = logicalId(fn.role);
    const resources = synth.template.toJSON().Resources as Record<
      string,
      { Type: string; Properties: { Roles?: unknown; PolicyDocument: { Statement: Statement[] } } }
    >;
    const statements = Object.values(resources)
      .filter(
        (policy) =>
          (policy.Type === 'AWS::IAM::Policy' || policy.Type === 'AWS::IAM::ManagedPolicy') &&
          JSON.stringify(policy.Properties.Roles ?? []).includes(`"${role}"`),
      )
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement);
    return statements.some(
      (statement) =>
        statement.Effect === 'Allow' &&
        asList(statement.Action).some((pattern) => glob(pattern, action)) &&
        asList(statement.Resource).some((pattern) => glob(resolve(pattern), resource)),
    );
  };

  const call = async (route: HttpRoute, query: Record<string, string>) => {
    const response = await fetch(`${runtime.httpUrl}${route.path}?${new URLSearchParams(query)}`);
    expect(response.status).toBe(200);
    return (await response.json()) as { ok: boolean; name?: string; message?: string; status?: number };
  };

  beforeAll(async () => {
    synth = synthesize(devSettings(), wiring);
    runtime = await startTestRuntime({ wiring });
  }, 180_000);
  afterAll(() => runtime?.stop());

  it('allows a function exactly what its declaration grants, as the template does, and refuses the rest with AccessDeniedException', async () => {
    const settings = devSettings();
    let refused = 0;
    for (const route of wiring.httpRoutes) {
      const key = `http:${route.id}`;
      const grants = functionGrants(deployedSpec(route, settings.authEnv, { withAuth: true }));
      for (const table of wiring.tables) {
        const tableArn = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${logicalId(synth.stack.tables.table(table.id, 'test'))}`;
        const tableName = runtime.env[envNames.tableName(table.id)] ?? '';
        for (const [op, { action, on }] of Object.entries(DYNAMODB_CALLS)) {
          if (on === 'index' && !table.globalIndexes?.length) continue;
          const declared = allowsTableAction(grants, table.id, action);
          const inTemplate = templateAllows(
            key,
            action,
            on === 'index' ? `${tableArn}/index/byOwner` : tableArn,
          );
          const outcome = await call(route, {
            op: op.replace(/Index$/, ''),
            table: tableName,
            ...(on === 'index' ? { index: 'byOwner' } : {}),
          });
          const what = `${route.id} ${op} on ${table.id}`;
          expect(inTemplate, `${what}: template vs declaration`).toBe(declared);
          expect(
            outcome.name !== 'AccessDeniedException',
            `${what}: local vs declaration (${outcome.message})`,
          ).toBe(declared);
          if (!declared) {
            refused += 1;
            // As the SDK surfaces DynamoDB's own answer: HTTP 400, the action and the table or index named.
            expect(outcome.status, what).toBe(400);
            expect(outcome.message).toMatch(
              new RegExp(
                `^User: arn:aws:sts::${ACCOUNT}:assumed-role/notify-local-${route.id}/.* is not authorized to perform: ${action} on resource: arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${tableName}${on === 'index' ? '/index/byOwner' : ''} because no identity-based policy allows the ${action} action$`,
              ),
            );
          }
        }
      }
      const wsApi = synth.stack.webSocketApi;
      if (!wsApi) throw new Error('no WebSocket API');
      for (const [op, method] of Object.entries(CONNECTION_CALLS)) {
        const resource = `arn:aws:execute-api:${REGION}:${ACCOUNT}:${logicalId(wsApi.api)}/${WEBSOCKET_STAGE_NAME}/${method}/@connections/nobody`;
        const inTemplate = templateAllows(key, 'execute-api:ManageConnections', resource);
        const outcome = await call(route, { op, callback: runtime.env[envNames.wsCallbackUrl] ?? '' });
        const what = `${route.id} ${op}`;
        expect(inTemplate, `${what}: template vs declaration`).toBe(grants.managesConnections);
        if (grants.managesConnections)
          expect(outcome, what).toMatchObject({ ok: false, name: 'GoneException' });
        else {
          refused += 1;
          expect(outcome, what).toMatchObject({ ok: false, name: 'AccessDeniedException', status: 403 });
          expect(outcome.message).toContain('is not authorized to perform: execute-api:ManageConnections');
        }
      }
    }
    expect(refused).toBeGreaterThan(0);
  }, 180_000);

  it('fails a function that writes a table it only reads (the deliberate wrong grant) with AccessDenied, and writes nothing', async () => {
    const reader = wiring.httpRoutes[0];
    if (!reader) throw new Error('no reader');
    const TableName = runtime.env[envNames.tableName('things')] ?? '';
    // This test process is no function: its calls are an administrator's, like an operator's tools.
    const Key = { pk: { S: 'probe' } };
    await dynamoDb().send(new DeleteItemCommand({ TableName, Key }));
    const outcome = await call(reader, { op: 'PutItem', table: TableName });
    expect(outcome).toMatchObject({ ok: false, name: 'AccessDeniedException', status: 400 });
    expect(outcome.message).toContain(
      `dynamodb:PutItem on resource: arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/`,
    );
    expect(
      (await dynamoDb().send(new GetItemCommand({ TableName, Key, ConsistentRead: true }))).Item,
    ).toBeUndefined();
  });
});
