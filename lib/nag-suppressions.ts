import { AspectPriority, Aspects, CfnResource, Stack, Validations } from 'aws-cdk-lib';
import { CfnManagedPolicy, CfnPolicy } from 'aws-cdk-lib/aws-iam';
import { flattenCfnReference } from 'cdk-nag/lib/utils/flatten-cfn-reference';
import type { IConstruct } from 'constructs';

interface PolicyStatementJson {
  readonly Effect?: string;
  readonly Action?: string | readonly string[];
  readonly Resource?: unknown;
}

const list = <T>(value: T | readonly T[] | undefined): readonly T[] =>
  value === undefined ? [] : Array.isArray(value) ? (value as readonly T[]) : [value as T];

/**
 * The wildcard resources the stack grants on purpose. Each one is already the narrowest ARN AWS offers for
 * what the function does; anything else with a `*` stays a finding and fails the synth.
 */
const ACCEPTED_WILDCARDS: readonly {
  readonly accepts: (actions: readonly string[], resource: string) => boolean;
  readonly reason: string;
}[] = [
  {
    accepts: (actions, resource) => resource === '*' && actions.every((action) => action.startsWith('xray:')),
    reason:
      'X-Ray PutTraceSegments/PutTelemetryRecords support no resource-level permissions; AWS documents "*" as ' +
      'the only resource (granted by Lambda active tracing).',
  },
  {
    accepts: (actions, resource) =>
      resource.endsWith('/index/*') && actions.every((action) => action.startsWith('dynamodb:')),
    reason:
      'The indexes of a table the function is declared to use (lib/wiring reads/writes); index ARNs are the ' +
      "table ARN + /index/<name>, and a grant covers the table's indexes as a whole.",
  },
  {
    accepts: (actions, resource) =>
      resource.endsWith('/@connections/*') &&
      actions.every((action) => action === 'execute-api:ManageConnections'),
    reason:
      'Connection ids are only known at run time; the grant is limited to the @connections API of this one ' +
      'WebSocket API and stage (declared managesConnections).',
  },
  {
    accepts: (actions, resource) =>
      resource.includes(':schedule/') &&
      resource.endsWith('/*') &&
      actions.every(
        (action) => action === 'scheduler:CreateSchedule' || action === 'scheduler:DeleteSchedule',
      ),
    reason:
      'One-time schedules are named at run time; the grant is limited to the service schedule group ' +
      '(declared schedules).',
  },
  {
    accepts: (actions, resource) =>
      // The function's ARN: its GetAtt, or the output of its area's nested stack that carries it.
      /^<[A-Za-z0-9]+(\.Arn|\.Outputs\.[A-Za-z0-9]+Arn)>:\*$/.test(resource) &&
      actions.every((action) => action === 'lambda:InvokeFunction'),
    reason:
      "Versions and aliases of the one function a recurring schedule invokes (the scheduler target role's grant).",
  },
];

/**
 * Acknowledges the cdk-nag findings that are right for this service, each with its reason: in every inline
 * policy, and in the managed "OverflowPolicy" CDK splits off a role whose grants outgrow the inline size (the
 * fan-out worker's). The split is a mutating aspect, so this runs as a read-only aspect, after it. The policy is
 * read when the tree is validated, after CDK has turned references between stacks into the nested stacks'
 * parameters and outputs: cdk-nag names a resource as the template spells it.
 */
export const acknowledgeNagFindings = (stack: Stack): void => {
  Aspects.of(stack).add(
    {
      visit: (construct: IConstruct) => {
        if (!(construct instanceof CfnPolicy || construct instanceof CfnManagedPolicy)) return;
        construct.node.addValidation({
          validate: () => {
            acknowledgeIn(Stack.of(construct), construct);
            return [];
          },
        });
      },
    },
    { priority: AspectPriority.READONLY },
  );
};

const acknowledgeIn = (stack: Stack, construct: CfnPolicy | CfnManagedPolicy): void => {
  const document = stack.resolve(construct.policyDocument) as { Statement?: PolicyStatementJson[] };
  for (const statement of document.Statement ?? []) {
    if (statement.Effect !== 'Allow') continue;
    const actions = list(statement.Action);
    for (const resource of list(statement.Resource).map((value) => flattenCfnReference(value))) {
      if (!resource.includes('*')) continue;
      const accepted = ACCEPTED_WILDCARDS.find((candidate) => candidate.accepts(actions, resource));
      if (accepted) {
        Validations.of(construct).acknowledge({
          id: `AwsSolutions-IAM5[Resource::${resource}]`,
          reason: accepted.reason,
        });
      }
    }
  }
};

/** Every route checks its token in the function (contract §2), so none has an API Gateway authorizer. */
export const ROUTES_AUTHORIZE_IN_FUNCTION =
  'Tokens are validated in each function (lambdas/core/auth: JWKS or the development HS256 key, issuer, ' +
  'audience, scopes, roles, jti replay), because the contract needs its own 401/403 bodies, per-route scope ' +
  'and role rules, and HS256 on development stages; routes declared public need no token at all.';

export const acknowledgeRoutesWithoutAuthorizer = (api: IConstruct): void => {
  Validations.of(api).acknowledge({ id: 'AwsSolutions-APIG4', reason: ROUTES_AUTHORIZE_IN_FUNCTION });
};

/**
 * Silences one cfn-lint rule for one resource (`npm run lint:cfn`), for findings where cfn-lint's schemas lag
 * behind CloudFormation; the reason travels with the resource's metadata.
 */
export const silenceCfnLint = (construct: IConstruct, rule: string, reason: string): void => {
  const resource = construct.node.defaultChild;
  if (!CfnResource.isCfnResource(resource))
    throw new Error(`${construct.node.path} has no CloudFormation resource`);
  resource.addMetadata('cfn-lint', { config: { ignore_checks: [rule] }, reason });
};
