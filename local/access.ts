import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type FunctionGrants, functionGrants } from '../lib/wiring';
import type { FunctionRef } from './lambda/types';
import { AwsServiceError } from './sqs/aws-http';

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

  constructor(private readonly accountId: string) {}

  /** The credentials a function runs with (stable per function id), registering its grants. */
  credentialsFor(fn: FunctionRef): FunctionCredentials {
    const digest = createHash('sha256').update(fn.id).digest('hex').slice(0, 11).toUpperCase();
    const accessKeyId = `${ACCESS_KEY_PREFIX}${digest}`;
    if (!this.byKey.has(accessKeyId))
      this.byKey.set(accessKeyId, { functionId: fn.id, grants: functionGrants(fn) });
    return { accessKeyId, secretAccessKey: `local-secret-${digest}` };
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
