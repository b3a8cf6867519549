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
  };
};
