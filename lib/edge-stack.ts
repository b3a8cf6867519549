import { Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { REMOVAL_POLICIES, type StageSettings, type WafSettings } from './config/stage-config';
import { ApiWebAcl } from './constructs/web-acl';

export interface NotifyEdgeStackProps extends StackProps {
  readonly settings: StageSettings;
  readonly webAcl: Extract<WafSettings['webAcl'], { kind: 'create' }>;
}

/**
 * The stage's web ACL, in us-east-1 whatever the region of the service: the service stack reads its ARN
 * from this stack's output with Fn::GetStackOutput (a weak cross-region reference, lib/app.ts).
 */
export class NotifyEdgeStack extends Stack {
  readonly webAcl: ApiWebAcl;

  constructor(scope: Construct, id: string, props: NotifyEdgeStackProps) {
    super(scope, id, {
      description: `Notify: web ACL in front of the HTTP API (stage ${props.settings.stage})`,
      ...props,
    });
    this.webAcl = new ApiWebAcl(this, 'HttpApiWebAcl', {
      stage: props.settings.stage,
      rateLimit: props.webAcl.rateLimit,
      managedRuleGroups: props.webAcl.managedRuleGroups,
      logRetentionDays: props.settings.logRetentionDays,
      removalPolicy: REMOVAL_POLICIES[props.settings.removalPolicy],
    });
  }
}
