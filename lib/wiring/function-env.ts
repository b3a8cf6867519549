import { envNames } from '../../common/env';
import type { PresenceSettings } from '../../common/presence-settings';
import { replayProtectionIn } from '../../common/settings';
import type { FunctionSpec, HttpRoute, QueueId, TableId } from './types';

/** The table whose readers also learn the number of connection shards (lambdas/domain/realtime/config.ts). */
const CONNECTIONS_TABLE: TableId = 'wsConnections';
/** The table whose writers also learn when rooms get presence summaries (lambdas/domain/realtime/presence-summary.ts). */
const PRESENCE_TABLE: TableId = 'presence';
const WEBHOOK_DELIVERIES_TABLE: TableId = 'webhookDeliveries';

/**
 * Where a deployment's resources are: CloudFormation tokens in the CDK stack, stand-in addresses locally.
 * Optional parts are absent when the deployment has no such resource.
 */
export interface FunctionResources {
  readonly stage: string;
  tableName(tableId: TableId): string;
  queueUrl(queueId: QueueId): string;
  queueArn(queueId: QueueId): string;
  /**
   * The ARN of a function others invoke (lib/wiring `invokes`); undefined where the function is not made yet
   * when the variables are (the CDK stack then adds the variable once every function exists).
   */
  readonly functionArn?: (functionId: string) => string;
  readonly busName: string;
  /** The `@connections` endpoint; undefined when no WebSocket route is declared. */
  readonly wsCallbackUrl: string | undefined;
  /** One-time schedules: undefined when no schedule target is declared. */
  readonly scheduling?: {
    readonly roleArn: string;
    readonly group: string;
    readonly targetQueues: readonly QueueId[];
  };
  readonly connectionShards: number;
  /** Stage setting `scale.presence`: presence summaries for rooms above `announceMax` subscribed connections. */
  readonly presence: PresenceSettings;
  readonly webhookDeliveryShards: number;
  /** The variables through which a function reaches the cursor key (a secret's ARN on AWS, the key locally). */
  readonly cursorKey?: Readonly<Record<string, string>>;
  /** Likewise for the key that seals webhook secrets (a KMS key id on AWS, a local key). */
  readonly webhookSecretKey?: Readonly<Record<string, string>>;
  /** The push settings (`SERVICE__PUSH__*`) of the functions that declare `push`; undefined: push not configured. */
  readonly push?: Readonly<Record<string, string>>;
  /** Auth settings of HTTP and WebSocket functions (`SERVICE__AUTH__*`, the HS256 secret's ARN). */
  readonly auth: Readonly<Record<string, string>>;
}

/**
 * The environment a function gets from its declaration: the stage, its auth settings when it serves HTTP or
 * WebSocket routes, and one variable per resource it declares (and nothing for the ones it does not). The CDK
 * stack and the local runtime both call this, so a function that uses an undeclared table, queue, bus or key
 * fails locally as it would on AWS. Grants follow the same declaration (lib/wiring/grants.ts).
 */
/**
 * The declaration as deployed: with replay protection on, every function that verifies tokens records their
 * `jti` in the `tokenReplay` table (lambdas/core/auth), so it writes that table whether or not its route says so.
 * Environment and grants both come from this, on AWS and locally.
 */
export const deployedSpec = (
  spec: FunctionSpec,
  auth: Readonly<Record<string, string>>,
  options: { readonly withAuth: boolean },
): FunctionSpec =>
  options.withAuth && replayProtectionIn(auth) !== 'off'
    ? { ...spec, writes: [...(spec.writes ?? []), 'tokenReplay'] }
    : spec;

export const functionEnvironment = (
  id: string,
  spec: FunctionSpec,
  resources: FunctionResources,
  options: { readonly withAuth: boolean },
): Record<string, string> => {
  const env: Record<string, string> = { [envNames.stage]: resources.stage };
  if (options.withAuth) Object.assign(env, resources.auth);
  const deployed = deployedSpec(spec, resources.auth, options);
  const tables = new Set([...(deployed.reads ?? []), ...(deployed.writes ?? [])]);
  for (const tableId of tables) env[envNames.tableName(tableId)] = resources.tableName(tableId);
  if (tables.has(CONNECTIONS_TABLE)) env[envNames.connectionShards] = String(resources.connectionShards);
  if (deployed.writes?.includes(PRESENCE_TABLE)) {
    env[envNames.presenceAnnounceMax] = String(resources.presence.announceMax);
    env[envNames.presenceSummarySecs] = String(resources.presence.summarySecs);
  }
  if (tables.has(WEBHOOK_DELIVERIES_TABLE)) {
    env[envNames.webhookDeliveryShards] = String(resources.webhookDeliveryShards);
  }
  for (const queueId of new Set(spec.sendsTo ?? [])) {
    env[envNames.queueUrl(queueId)] = resources.queueUrl(queueId);
    env[envNames.queueArn(queueId)] = resources.queueArn(queueId);
  }
  if (resources.functionArn) {
    for (const functionId of new Set(spec.invokes ?? [])) {
      env[envNames.functionArn(functionId)] = resources.functionArn(functionId);
    }
  }
  if (spec.putsEvents) env[envNames.busName] = resources.busName;
  if (spec.managesConnections) {
    if (resources.wsCallbackUrl === undefined) {
      throw new Error(`lib/wiring: ${id} manages WebSocket connections, but no WebSocket route is declared`);
    }
    env[envNames.wsCallbackUrl] = resources.wsCallbackUrl;
  }
  if (spec.schedules && resources.scheduling) {
    env[envNames.schedulerRoleArn] = resources.scheduling.roleArn;
    env[envNames.scheduleGroup] = resources.scheduling.group;
    // A schedule names its target by ARN; the function needs no send permission of its own.
    for (const queueId of resources.scheduling.targetQueues) {
      env[envNames.queueArn(queueId)] = resources.queueArn(queueId);
    }
  }
  if ('access' in spec) {
    const route = spec as HttpRoute;
    env[envNames.routeAccess] = JSON.stringify({ id: route.id, access: route.access });
  }
  if (spec.cursorKey && resources.cursorKey) Object.assign(env, resources.cursorKey);
  if (spec.webhookSecretKey && resources.webhookSecretKey) Object.assign(env, resources.webhookSecretKey);
  if (spec.push && resources.push) Object.assign(env, resources.push);
  return env;
};
