import type { PushProvider } from '../../common/settings';
import type { FunctionSpec, QueueId, TableId } from './types';

/**
 * What a function may do, from its declaration: the one mapping behind both the IAM statements of the CDK
 * stack (lib/notify-stack.ts) and the local stand-ins' access checks (local/access.ts).
 */
export interface FunctionGrants {
  /** Table → `read` (GetItem, Query, Scan, …) or `readWrite` (reads plus PutItem, UpdateItem, DeleteItem, …). */
  readonly tables: ReadonlyMap<TableId, 'read' | 'readWrite'>;
  /** Queues it may SendMessage / SendMessageBatch to. */
  readonly sendsTo: ReadonlySet<QueueId>;
  readonly putsEvents: boolean;
  readonly managesConnections: boolean;
  readonly schedules: boolean;
  readonly cursorKey: boolean;
  readonly webhookSecretKey: 'encrypt' | 'decrypt' | undefined;
  /** Providers whose credential secrets (every app's) it may read. */
  readonly pushCredentials: ReadonlySet<PushProvider>;
  /** Functions (declared ids) it may invoke: `lambda:InvokeFunction` on each one's ARN. */
  readonly invokes: ReadonlySet<string>;
}

export const functionGrants = (spec: FunctionSpec): FunctionGrants => {
  const tables = new Map<TableId, 'read' | 'readWrite'>();
  for (const tableId of spec.reads ?? []) tables.set(tableId, 'read');
  for (const tableId of spec.writes ?? []) tables.set(tableId, 'readWrite');
  return {
    tables,
    sendsTo: new Set(spec.sendsTo ?? []),
    putsEvents: spec.putsEvents ?? false,
    managesConnections: spec.managesConnections ?? false,
    schedules: spec.schedules ?? false,
    cursorKey: spec.cursorKey ?? false,
    webhookSecretKey: spec.webhookSecretKey,
    pushCredentials: new Set(spec.push?.readsCredentials ?? []),
    invokes: new Set(spec.invokes ?? []),
  };
};

/**
 * The IAM actions of a `read` grant on a table, granted on the table and its indexes (`table/index/*`).
 * The same list as CDK's `grantReadData` minus the stream actions (no table has a stream).
 * `ConditionCheckItem` is a read: it authorizes a transaction's condition check on the table.
 */
export const TABLE_READ_ACTIONS = [
  'dynamodb:BatchGetItem',
  'dynamodb:ConditionCheckItem',
  'dynamodb:DescribeTable',
  'dynamodb:GetItem',
  'dynamodb:Query',
  'dynamodb:Scan',
] as const;

/** A `readWrite` grant: the reads plus these. */
export const TABLE_WRITE_ACTIONS = [
  'dynamodb:BatchWriteItem',
  'dynamodb:DeleteItem',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
] as const;

export const tableActions = (access: 'read' | 'readWrite'): readonly string[] =>
  access === 'read' ? TABLE_READ_ACTIONS : [...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS];

/** Whether the grants allow an IAM `dynamodb:*` action on a table (the grant covers its indexes too). */
export const allowsTableAction = (grants: FunctionGrants, tableId: TableId, action: string): boolean => {
  const access = grants.tables.get(tableId);
  return access !== undefined && tableActions(access).includes(action);
};

/** The one IAM action behind PostToConnection, GetConnection and DeleteConnection (`@connections`). */
export const MANAGE_CONNECTIONS_ACTION = 'execute-api:ManageConnections';
