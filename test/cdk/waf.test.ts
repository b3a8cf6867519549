/**
 * settings.waf: the HTTP API behind CloudFront with a WAF web ACL (created in us-east-1 by the app, or an
 * existing one), and functions that refuse requests which did not come through CloudFront.
 */
import { App, type CfnElement, type Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { addNotifyStacks, edgeStackName, type NotifyApp, stackName } from '../../lib/app';
import { EDGE_REGION, StageConfigError } from '../../lib/config/stage-config';
import { RATE_LIMITED_RETRY_AFTER_SECS } from '../../lib/constructs/web-acl';
import { envNames, ORIGIN_VERIFY_HEADER } from '../../lib/wiring';
import { flattenFunctionStacks, stageFileFrom, testApp } from './synth';

const SERVICE_ENV = { account: '123456789012', region: 'eu-west-1' };
const EXISTING_ACL =
  'arn:aws:wafv2:us-east-1:123456789012:global/webacl/central-api-acl/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b';
/** AWS managed policies (CloudFront developer guide, "Use managed cache/origin request policies"). */
const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
const ALL_VIEWER_EXCEPT_HOST_HEADER = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';

type Resource = { Type: string; Properties: Record<string, unknown> };

const build = (config: string, env: { account?: string; region?: string } = SERVICE_ENV) => {
  const app = testApp({ stage: 'prod', config });
  return { app, stacks: addNotifyStacks(app, { env }) };
};

const nagFindings = (app: App, stack: Stack) =>
  new AwsSolutionsChecks(app)
    .validateScope(stack)
    .violations.map((violation) => `${violation.ruleName}: ${violation.description}`);

const logicalId = (stack: Stack, construct: IConstruct) =>
  stack.getLogicalId(construct.node.defaultChild as CfnElement);

describe('WAF the app creates (waf.rate_limit, waf.managed_rule_groups)', () => {
  let app: App;
  let stacks: NotifyApp;
  let edge: Template;
  let service: Template;

  beforeAll(() => {
    ({ app, stacks } = build('test/cdk/fixtures/prod-waf.json'));
    if (!stacks.edge) throw new Error('expected an edge stack');
    edge = Template.fromStack(stacks.edge);
    service = Template.fromStack(stacks.service);
  });

  it('puts the web ACL in us-east-1, in a stack of its own, with CLOUDFRONT scope', () => {
    expect(stacks.edge?.stackName).toBe(edgeStackName('prod'));
    expect(stacks.edge?.region).toBe(EDGE_REGION);
    expect(stacks.service.region).toBe(SERVICE_ENV.region);
    // Deployed first: the service stack reads its output.
    expect(stacks.service.dependencies).toEqual([stacks.edge]);
    edge.resourceCountIs('AWS::WAFv2::WebACL', 1);
    edge.hasResourceProperties('AWS::WAFv2::WebACL', {
      Scope: 'CLOUDFRONT',
      DefaultAction: { Allow: {} },
      VisibilityConfig: Match.objectLike({ CloudWatchMetricsEnabled: true, SampledRequestsEnabled: true }),
    });
  });

  it('answers clients over the per-IP rate with 429 in the contract error format and Retry-After', () => {
    const [acl] = Object.values(edge.findResources('AWS::WAFv2::WebACL')) as Resource[];
    const rules = acl?.Properties.Rules as Record<string, unknown>[];
    expect(rules[0]).toMatchObject({
      Name: 'RateLimitPerIp',
      Priority: 0,
      Statement: { RateBasedStatement: { AggregateKeyType: 'IP', Limit: 500, EvaluationWindowSec: 60 } },
      Action: {
        Block: {
          CustomResponse: {
            ResponseCode: 429,
            CustomResponseBodyKey: 'rate_limited',
            ResponseHeaders: [{ Name: 'Retry-After', Value: String(RATE_LIMITED_RETRY_AFTER_SECS) }],
          },
        },
      },
    });
    const bodies = acl?.Properties.CustomResponseBodies as Record<
      string,
      { ContentType: string; Content: string }
    >;
    expect(bodies.rate_limited?.ContentType).toBe('APPLICATION_JSON');
    // contract §3: {"code", "message", "request_id"}
    expect(JSON.parse(bodies.rate_limited?.Content ?? '')).toEqual({
      code: 'rate_limited',
      message: expect.stringContaining(`${RATE_LIMITED_RETRY_AFTER_SECS} seconds`),
      request_id: expect.any(String),
    });
  });

  it('runs the configured managed rule groups in order, counting only the body-size rule', () => {
    edge.hasResourceProperties('AWS::WAFv2::WebACL', {
      Rules: [
        Match.objectLike({ Name: 'RateLimitPerIp' }),
        Match.objectLike({
          Name: 'AWSManagedRulesCommonRuleSet',
          Priority: 1,
          OverrideAction: { None: {} },
          Statement: {
            ManagedRuleGroupStatement: {
              VendorName: 'AWS',
              Name: 'AWSManagedRulesCommonRuleSet',
              // Notification bodies go up to 256 KiB; the rule blocks anything over 8 KiB.
              RuleActionOverrides: [{ Name: 'SizeRestrictions_BODY', ActionToUse: { Count: {} } }],
            },
          },
        }),
        Match.objectLike({
          Name: 'AWSManagedRulesAmazonIpReputationList',
          Priority: 2,
          Statement: {
            ManagedRuleGroupStatement: Match.objectEquals({
              VendorName: 'AWS',
              Name: 'AWSManagedRulesAmazonIpReputationList',
            }),
          },
        }),
      ],
    });
  });

  it('logs requests to an aws-waf-logs- group with retention, never the Authorization header', () => {
    edge.hasResourceProperties('AWS::Logs::LogGroup', {
      // Unique per stack instance: a retained group from an earlier deploy must not collide.
      LogGroupName: { 'Fn::Join': ['', ['aws-waf-logs-notify-prod-', Match.anyValue()]] },
      RetentionInDays: 90,
    });
    const [logging] = Object.values(edge.findResources('AWS::WAFv2::LoggingConfiguration')) as Resource[];
    expect(logging?.Properties.RedactedFields).toEqual([{ SingleHeader: { Name: 'authorization' } }]);
    // WAF refuses the `…:*` form of a log group ARN.
    const destination = JSON.stringify(logging?.Properties.LogDestinationConfigs);
    expect(destination).toContain(':log-group:');
    expect(destination).not.toContain(':*');
  });

  it('serves the HTTP API through CloudFront with the web ACL, uncached, all methods and headers', () => {
    service.resourceCountIs('AWS::CloudFront::Distribution', 1);
    service.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        // The ACL's ARN is read from the us-east-1 stack's output: no custom resource, no export lock.
        WebACLId: {
          'Fn::GetStackOutput': {
            StackName: edgeStackName('prod'),
            Region: EDGE_REGION,
            OutputName: Match.stringLikeRegexp('WebAcl'),
          },
        },
        PriceClass: 'PriceClass_100',
        DefaultCacheBehavior: Match.objectLike({
          AllowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
          CachePolicyId: CACHING_DISABLED,
          OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER,
          ViewerProtocolPolicy: 'https-only',
        }),
        Origins: [
          Match.objectLike({
            CustomOriginConfig: Match.objectLike({
              OriginProtocolPolicy: 'https-only',
              OriginSSLProtocols: ['TLSv1.2'],
              OriginReadTimeout: 30,
            }),
          }),
        ],
      }),
    });
  });

  it('lets browser pages of cors.allowed_origins call it: API Gateway answers preflights, CloudFront passes them uncached', () => {
    service.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      ProtocolType: 'HTTP',
      CorsConfiguration: {
        AllowOrigins: ['https://app.example.test', 'http://localhost:5173'],
        AllowHeaders: ['authorization', 'content-type', 'idempotency-key', 'x-request-id'],
        AllowMethods: ['GET', 'POST', 'PUT', 'DELETE'],
        ExposeHeaders: ['x-request-id', 'retry-after'],
        MaxAge: 7200,
        AllowCredentials: false,
      },
    });
    // A preflight must reach API Gateway (whose $default function answers it, origin header included) with its
    // Origin and Access-Control-Request-* headers, and never come from a cache, or one origin's answer would be
    // served to another.
    service.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        DefaultCacheBehavior: Match.objectLike({
          AllowedMethods: Match.arrayWith(['OPTIONS']),
          CachePolicyId: CACHING_DISABLED,
          OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER,
        }),
      }),
    });
  });

  it('sends the origin secret from Secrets Manager, never as a literal, and the HTTP functions check it', () => {
    const frontDoor = stacks.service.httpFrontDoor;
    if (!frontDoor) throw new Error('expected a front door');
    const secretId = logicalId(stacks.service, frontDoor.originSecret);
    const [distribution] = Object.values(
      service.findResources('AWS::CloudFront::Distribution'),
    ) as Resource[];
    if (!distribution) throw new Error('expected a distribution');
    const origin = (distribution.Properties.DistributionConfig as { Origins: Record<string, unknown>[] })
      .Origins[0];
    expect(origin?.OriginCustomHeaders).toEqual([
      {
        HeaderName: ORIGIN_VERIFY_HEADER,
        HeaderValue: {
          'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: secretId }, ':SecretString:::}}']],
        },
      },
    ]);

    // The functions live in their areas' nested stacks: read them in the stage's template as one.
    const stage = flattenFunctionStacks(stacks.service);
    const resources = stage.toJSON().Resources as Record<string, Resource>;
    for (const [key, fn] of stacks.service.functions) {
      const environment = resources[logicalId(stacks.service, fn.function)]?.Properties.Environment as {
        Variables: Record<string, unknown>;
      };
      const expected = key.startsWith('http:') ? { Ref: secretId } : undefined;
      expect(environment.Variables[envNames.originSecretArn], key).toEqual(expected);
    }
    // Read access for exactly the HTTP functions' roles.
    const readers = Object.values(stage.findResources('AWS::IAM::Policy')).filter((policy) =>
      JSON.stringify(policy).includes(`"Ref":"${secretId}"`),
    );
    const httpFunctions = [...stacks.service.functions.keys()].filter((key) => key.startsWith('http:'));
    expect(readers).toHaveLength(httpFunctions.length);
    for (const policy of readers) {
      expect(JSON.stringify(policy)).toContain('secretsmanager:GetSecretValue');
    }
  });

  it('gives the CloudFront URL as the REST base URL', () => {
    const distributionId = logicalId(
      stacks.service,
      stacks.service.httpFrontDoor?.distribution as IConstruct,
    );
    service.hasOutput('HttpApiUrl', {
      Value: { 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [distributionId, 'DomainName'] }, '/api/v1']] },
    });
    service.hasOutput('HttpApiDistributionId', { Value: { Ref: distributionId } });
  });

  it('passes cdk-nag AwsSolutions in both stacks, every acknowledgement with a reason', () => {
    for (const stack of [stacks.service, stacks.edge as Stack]) {
      expect(nagFindings(app, stack), stack.stackName).toEqual([]);
      expect(Annotations.fromStack(stack).findError('*', Match.anyValue()), stack.stackName).toEqual([]);
      const acknowledgements = stack.node
        .findAll()
        .flatMap((construct) => construct.node.metadata)
        .filter((entry) => entry.type === 'aws:cdk:acknowledged-rules')
        .flatMap((entry) => Object.values(entry.data as Record<string, string>));
      for (const reason of acknowledgements) expect(reason.length).toBeGreaterThan(40);
    }
  });
});

describe('WAF with an existing web ACL (waf.web_acl_arn) and a custom domain (domains.http)', () => {
  const CERTIFICATE = 'arn:aws:acm:us-east-1:123456789012:certificate/1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d';
  let app: App;
  let stacks: NotifyApp;
  let template: Template;
  /** The app's children as built, before synthesis adds its construct tree's. */
  let built: string[];

  beforeAll(() => {
    ({ app, stacks } = build('test/cdk/fixtures/prod-waf-existing-acl.json'));
    built = app.node.children.map((child) => child.node.id);
    template = Template.fromStack(stacks.service);
  });

  it('creates no edge stack and attaches the named ACL', () => {
    expect(stacks.edge).toBeUndefined();
    expect(built).toEqual([stackName('prod')]);
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({ WebACLId: EXISTING_ACL, PriceClass: 'PriceClass_All' }),
    });
    // This stage lists no cors.allowed_origins: no CORS configuration, browsers of other origins are refused.
    const apis = Object.values(
      template.findResources('AWS::ApiGatewayV2::Api', { Properties: { ProtocolType: 'HTTP' } }),
    ) as Resource[];
    expect(apis).toHaveLength(1);
    expect(apis[0]?.Properties.CorsConfiguration).toBeUndefined();
  });

  it('serves the custom domain with its certificate and TLS 1.2 at least, and gives it as the REST URL', () => {
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        Aliases: ['notify.example.test'],
        ViewerCertificate: {
          AcmCertificateArn: CERTIFICATE,
          MinimumProtocolVersion: 'TLSv1.2_2021',
          SslSupportMethod: 'sni-only',
        },
      }),
    });
    template.hasOutput('HttpApiUrl', { Value: 'https://notify.example.test/api/v1' });
    const distributionId = logicalId(
      stacks.service,
      stacks.service.httpFrontDoor?.distribution as IConstruct,
    );
    template.hasOutput('HttpApiDistributionDomainName', {
      Value: { 'Fn::GetAtt': [distributionId, 'DomainName'] },
    });
    // With a certificate of its own the TLS minimum is enforced: no CFR4 to acknowledge.
    expect(nagFindings(app, stacks.service)).toEqual([]);
    const acknowledged = stacks.service.node
      .findAll()
      .flatMap((construct) => construct.node.metadata)
      .filter((entry) => entry.type === 'aws:cdk:acknowledged-rules')
      .flatMap((entry) => Object.keys(entry.data as Record<string, string>));
    expect(acknowledged).not.toContain('Annotation::AwsSolutions-CFR4');
    expect(acknowledged).toContain('Annotation::AwsSolutions-CFR3');
  });
});

describe('WAF settings the app refuses', () => {
  it("needs the service's region to reference the us-east-1 web ACL", () => {
    // Only a development stage can lack a region (a production stage must name its own).
    const config = stageFileFrom('config/dev.json', { waf: {} });
    const app = new App({ context: { stage: 'devwaf', config } });
    expect(() => addNotifyStacks(app, { env: { account: SERVICE_ENV.account } })).toThrow(StageConfigError);
    expect(() => addNotifyStacks(app, { env: {} })).toThrow(/region must be known.*"region"/);
    expect(app.node.children).toHaveLength(0);
  });

  it("builds the stacks in the stage file's region, whatever the CLI's", () => {
    const { stacks } = build('test/cdk/fixtures/prod-waf.json', {
      account: '123456789012',
      region: 'us-east-1',
    });
    expect(stacks.service.region).toBe('eu-west-1');
    expect(stacks.edge?.region).toBe(EDGE_REGION);
  });

  it('builds no CloudFront when the stage has no waf settings', () => {
    const app = testApp({ stage: 'dev' });
    const { service, edge } = addNotifyStacks(app, { env: SERVICE_ENV });
    expect(edge).toBeUndefined();
    expect(service.httpFrontDoor).toBeUndefined();
    Template.fromStack(service).resourceCountIs('AWS::CloudFront::Distribution', 0);
  });
});
