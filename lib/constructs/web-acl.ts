import { ArnFormat, Fn, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { errorBody } from '../../common/error-body';
import type { ManagedRuleGroup } from '../config/stage-config';

export interface ApiWebAclProps {
  readonly stage: string;
  /** Requests one client IP may send per window before it gets 429 (contract §3 `rate_limited`). */
  readonly rateLimit: { readonly requests: number; readonly windowSecs: number };
  readonly managedRuleGroups: readonly ManagedRuleGroup[];
  readonly logRetentionDays: number;
  readonly removalPolicy: RemovalPolicy;
}

/** Seconds a rate-limited client is told to wait: WAF re-evaluates its rate about every 30 s. */
export const RATE_LIMITED_RETRY_AFTER_SECS = 60;

/**
 * WAF cannot compute per-request values, so the body is fixed: `request_id` cannot be the request's id.
 * The CloudFront id (response header X-Amz-Cf-Id, `httpRequest.requestId` in the WAF log) identifies it.
 */
export const RATE_LIMITED_BODY = JSON.stringify(
  errorBody(
    {
      code: 'rate_limited',
      message: `Too many requests from this address; retry after ${RATE_LIMITED_RETRY_AFTER_SECS} seconds`,
    },
    'edge',
  ),
);

/**
 * Rules of the common rule set that would refuse legitimate API traffic, counted (logged) instead of blocked:
 * notification bodies go up to 256 KiB (contract §3), the rule blocks bodies over 8 KiB.
 */
const COUNTED_RULES: Partial<Record<ManagedRuleGroup, readonly string[]>> = {
  AWSManagedRulesCommonRuleSet: ['SizeRestrictions_BODY'],
};

const visibility = (metricName: string): wafv2.CfnWebACL.VisibilityConfigProperty => ({
  cloudWatchMetricsEnabled: true,
  metricName,
  sampledRequestsEnabled: true,
});

/**
 * The CLOUDFRONT-scope web ACL in front of the HTTP API (created in us-east-1, as WAF requires): a per-IP rate
 * limit answering in the contract's error format, then AWS managed rule groups; everything else is allowed.
 * Requests are logged to CloudWatch Logs with the Authorization header redacted.
 */
export class ApiWebAcl extends Construct {
  readonly webAcl: wafv2.CfnWebACL;

  constructor(scope: Construct, id: string, props: ApiWebAclProps) {
    super(scope, id);
    const name = `notify-${props.stage}-http-api`;
    const rules: wafv2.CfnWebACL.RuleProperty[] = [
      {
        name: 'RateLimitPerIp',
        priority: 0,
        statement: {
          rateBasedStatement: {
            aggregateKeyType: 'IP',
            limit: props.rateLimit.requests,
            evaluationWindowSec: props.rateLimit.windowSecs,
          },
        },
        action: {
          block: {
            customResponse: {
              responseCode: 429,
              customResponseBodyKey: 'rate_limited',
              responseHeaders: [{ name: 'Retry-After', value: String(RATE_LIMITED_RETRY_AFTER_SECS) }],
            },
          },
        },
        visibilityConfig: visibility(`${name}-rate-limit`),
      },
      ...props.managedRuleGroups.map(
        (group, index): wafv2.CfnWebACL.RuleProperty => ({
          name: group,
          priority: index + 1,
          statement: {
            managedRuleGroupStatement: {
              vendorName: 'AWS',
              name: group,
              ruleActionOverrides: COUNTED_RULES[group]?.map((rule) => ({
                name: rule,
                actionToUse: { count: {} },
              })),
            },
          },
          overrideAction: { none: {} },
          visibilityConfig: visibility(`${name}-${group}`),
        }),
      ),
    ];
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      name,
      description: `Notify ${props.stage}: HTTP API via CloudFront`,
      scope: 'CLOUDFRONT',
      defaultAction: { allow: {} },
      rules,
      customResponseBodies: {
        rate_limited: { contentType: 'APPLICATION_JSON', content: RATE_LIMITED_BODY },
      },
      visibilityConfig: visibility(name),
    });

    // WAF delivers only to log groups whose name starts with aws-waf-logs-. The stack id's first block makes
    // the name unique per stack instance, so a retained group does not block a later redeploy of the stage.
    const stackIdBlock = Fn.select(0, Fn.split('-', Fn.select(2, Fn.split('/', Stack.of(this).stackId))));
    const logGroup = new logs.LogGroup(this, 'Logs', {
      logGroupName: `aws-waf-logs-notify-${props.stage}-${stackIdBlock}`,
      retention: props.logRetentionDays as logs.RetentionDays,
      removalPolicy: props.removalPolicy,
    });
    new wafv2.CfnLoggingConfiguration(this, 'Logging', {
      resourceArn: this.webAcl.attrArn,
      // The log group's own ARN attribute ends in `:*`, which WAF rejects as a destination.
      logDestinationConfigs: [
        Stack.of(this).formatArn({
          service: 'logs',
          resource: 'log-group',
          resourceName: logGroup.logGroupName,
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      ],
      // Bearer tokens must not end up in logs.
      redactedFields: [{ singleHeader: { Name: 'authorization' } }],
    });
  }
}
