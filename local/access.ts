import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import {
  allowsTableAction,
  type FunctionGrants,
  type FunctionSpec,
  functionGrants,
  MANAGE_CONNECTIONS_ACTION,
  type TableId,
} from '../lib/wiring';
import { AwsServiceError } from './aws-http';

/**
 * Local least privilege: each function calls the stand-ins with credentials of its own, and a stand-in looks
 * the caller's access key up to refuse what the function's grants (lib/wiring/grants.ts, the mapping the
 * stack's IAM statements come from) do not allow. Any other key (tests, operators' tools) is an administrator.
 */
export interface FunctionCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

interface Principal {
  readonly functionId: string;
  readonly grants: FunctionGrants;
}

const ACCESS_KEY_PREFIX = 'ASIALOCAL';

export class LocalAccess {
  private readonly byKey = new Map<string, Principal>();

  /** Physical table name → declared table id, for the DynamoDB checks. */
  private readonly tableIds = new Map<string, TableId>();

  constructor(
    private readonly accountId: string,
    private readonly region: string,
  ) {}

  /**
   * The credentials a function runs with (stable per function id), registering its grants. `deployed` is its
   * declaration as deployed (lib/wiring deployedSpec), the one the CDK turns into IAM statements.
   */
  credentialsFor(
    fn: FunctionSpec & { readonly id: string },
    deployed: FunctionSpec = fn,
  ): FunctionCredentials {
    const digest = createHash('sha256').update(fn.id).digest('hex').slice(0, 11).toUpperCase();
    const accessKeyId = `${ACCESS_KEY_PREFIX}${digest}`;
    if (!this.byKey.has(accessKeyId))
      this.byKey.set(accessKeyId, { functionId: fn.id, grants: functionGrants(deployed) });
    return { accessKeyId, secretAccessKey: `local-secret-${digest}` };
  }

  /** Tells the DynamoDB checks which declared table each physical table name is. */
  registerTable(name: string, tableId: TableId): void {
    this.tableIds.set(name, tableId);
  }

  /** A DynamoDB call through the local proxy: each authorization it needs must be granted (else AccessDenied). */
  checkDynamoDb(
    headers: IncomingMessage['headers'],
    operation: string,
    body: Readonly<Record<string, unknown>>,
  ): void {
    if (!this.principalOf(headers)) return;
    for (const { action, table, index } of dynamoDbAuthorizations(operation, body)) {
      const tableId = this.tableIds.get(table);
      const arn = `arn:aws:dynamodb:${this.region}:${this.accountId}:table/${table}${index ? `/index/${index}` : ''}`;
      this.check(
        headers,
        action,
        arn,
        (grants) => tableId !== undefined && allowsTableAction(grants, tableId, action),
      );
    }
  }

  /**
   * An `@connections` call (PostToConnection, GetConnection, DeleteConnection): `execute-api:ManageConnections`
   * on the stage's `@connections` resource, HTTP 403 as API Gateway answers it. The resource in the message
   * names `{connectionId}` literally, as AWS's does.
   */
  checkManageConnections(
    headers: IncomingMessage['headers'],
    apiId: string,
    stage: string,
    method: string,
  ): void {
    this.check(
      headers,
      MANAGE_CONNECTIONS_ACTION,
      `arn:aws:execute-api:${this.region}:${this.accountId}:${apiId}/${stage}/${method}/@connections/{connectionId}`,
      (grants) => grants.managesConnections,
      403,
    );
  }

  /** The function behind a SigV4-signed request; undefined for any other caller. */
  principalOf(headers: IncomingMessage['headers']): Principal | undefined {
    const authorization = headers.authorization;
    const key =
      typeof authorization === 'string' ? /Credential=([^/,\s]+)\//.exec(authorization)?.[1] : undefined;
    return key ? this.byKey.get(key) : undefined;
  }

  /** Throws AccessDeniedException, worded as IAM words it, unless `allowed(grants)` holds for the caller. */
  check(
    headers: IncomingMessage['headers'],
    action: string,
    resourceArn: string,
    allowed: (grants: FunctionGrants) => boolean,
    /** 400 for the AWS JSON protocols (SQS, EventBridge), 403 for REST ones (Scheduler). */
    status = 400,
  ): void {
    const principal = this.principalOf(headers);
    if (!principal || allowed(principal.grants)) return;
    const role = `notify-local-${principal.functionId.replace(/[^\w-]/g, '-')}`;
    throw new AwsServiceError(
      'AccessDeniedException',
      `User: arn:aws:sts::${this.accountId}:assumed-role/${role}/${role} is not authorized to perform: ` +
        `${action} on resource: ${resourceArn} because no identity-based policy allows the ${action} action`,
      status,
    );
  }
}

/** One IAM authorization a DynamoDB call needs: an action on a table, or on one of its indexes. */
export interface DynamoDbAuthorization {
  readonly action: string;
  readonly table: string;
  readonly index?: string;
}

const stringField = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const recordField = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

/** The parts of a transaction and the IAM action each needs ("Using IAM with DynamoDB transactions"). */
const TRANSACT_ACTIONS: Readonly<Record<string, string>> = {
  ConditionCheck: 'dynamodb:ConditionCheckItem',
  Put: 'dynamodb:PutItem',
  Update: 'dynamodb:UpdateItem',
  Delete: 'dynamodb:DeleteItem',
  Get: 'dynamodb:GetItem',
};

/**
 * What IAM checks for a DynamoDB API call: the action named after the operation on its table; Query and Scan
 * with `IndexName` on the index (`table/T/index/I`); BatchGetItem and BatchWriteItem on every table of the
 * request; TransactGetItems and TransactWriteItems per item, as GetItem, PutItem, UpdateItem, DeleteItem or
 * ConditionCheckItem. Any other operation needs `dynamodb:<Operation>` on its table (or on `*`).
 */
export const dynamoDbAuthorizations = (
  operation: string,
  body: Readonly<Record<string, unknown>>,
): DynamoDbAuthorization[] => {
  if (operation === 'BatchGetItem' || operation === 'BatchWriteItem') {
    return Object.keys(recordField(body.RequestItems)).map((table) => ({
      action: `dynamodb:${operation}`,
      table,
    }));
  }
  if (operation === 'TransactGetItems' || operation === 'TransactWriteItems') {
    const items = Array.isArray(body.TransactItems) ? body.TransactItems : [];
    return items.flatMap((item) =>
      Object.entries(recordField(item)).flatMap(([part, request]) => {
        const action = TRANSACT_ACTIONS[part];
        const table = stringField(recordField(request).TableName);
        return action && table ? [{ action, table }] : [];
      }),
    );
  }
  const table = stringField(body.TableName) ?? '*';
  const index = stringField(body.IndexName);
  return [{ action: `dynamodb:${operation}`, table, ...(index ? { index } : {}) }];
};
