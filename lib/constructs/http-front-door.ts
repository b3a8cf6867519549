import { Duration, Fn, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import type { CustomDomain } from '../config/stage-config';
import { ORIGIN_VERIFY_HEADER } from '../wiring';
import { API_BASE_PATH, type ServiceHttpApi } from './apis';

export interface HttpFrontDoorProps {
  readonly stage: string;
  readonly httpApi: ServiceHttpApi;
  /** ARN of a CLOUDFRONT-scope web ACL (us-east-1). */
  readonly webAclArn: string;
  readonly priceClass: cloudfront.PriceClass;
  /** The API's own host name and its ACM certificate (us-east-1); without it, `*.cloudfront.net`. */
  readonly domain?: CustomDomain;
  readonly removalPolicy: RemovalPolicy;
}

/** API Gateway ends an HTTP API integration after 30 s; CloudFront need not wait longer. */
const ORIGIN_READ_TIMEOUT = Duration.seconds(30);

/**
 * CloudFront in front of the HTTP API, so that a WAF web ACL can inspect its traffic (WAF cannot attach to
 * an HTTP API). Nothing is cached and every viewer header but Host is forwarded (with caching disabled that
 * includes Authorization). CloudFront adds a secret header that the functions check
 * (lambdas/core/http/origin-check.ts), so the execute-api URL cannot be used to go around the WAF.
 */
export class HttpFrontDoor extends Construct {
  readonly distribution: cloudfront.Distribution;
  /** The value CloudFront sends in ORIGIN_VERIFY_HEADER; HTTP functions read it at cold start. */
  readonly originSecret: secretsmanager.Secret;
  /** The host clients call: the custom domain, or the distribution's `*.cloudfront.net` name. */
  readonly host: string;

  constructor(scope: Construct, id: string, props: HttpFrontDoorProps) {
    super(scope, id);
    this.originSecret = new secretsmanager.Secret(this, 'OriginSecret', {
      description: `Notify ${props.stage}: header value CloudFront sends to the HTTP API`,
      generateSecretString: { passwordLength: 48, excludePunctuation: true },
      removalPolicy: props.removalPolicy,
    });
    Validations.of(this.originSecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'CloudFront takes the value as a literal origin header at deploy time, so a rotation Lambda would ' +
        'desynchronise it; rotate with `aws secretsmanager put-secret-value` and a deploy. Functions re-read ' +
        'the secret on a mismatch (at most once a minute), so they follow without a restart.',
    });

    // `https://{api-id}.execute-api.{region}.amazonaws.com` → its host name.
    const apiDomain = Fn.select(2, Fn.split('/', props.httpApi.api.apiEndpoint));
    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: `Notify ${props.stage} REST API`,
      webAclId: props.webAclArn,
      priceClass: props.priceClass,
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      ...(props.domain && {
        domainNames: [props.domain.name],
        certificate: acm.Certificate.fromCertificateArn(this, 'Certificate', props.domain.certificateArn),
        minimumProtocolVersion: cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
      }),
      defaultBehavior: {
        origin: new origins.HttpOrigin(apiDomain, {
          protocolPolicy: cloudfront.OriginProtocolPolicy.HTTPS_ONLY,
          originSslProtocols: [cloudfront.OriginSslPolicy.TLS_V1_2],
          readTimeout: ORIGIN_READ_TIMEOUT,
          // CloudFront overwrites a viewer's header of the same name, so a client cannot forge it.
          customHeaders: { [ORIGIN_VERIFY_HEADER]: this.originSecret.secretValue.unsafeUnwrap() },
        }),
        // An API answers over HTTPS only: a redirect would drop a POST's body.
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_ALL,
        cachePolicy: cloudfront.CachePolicy.CACHING_DISABLED,
        originRequestPolicy: cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
        compress: false,
      },
    });
    const acknowledge = (id: string, reason: string) =>
      Validations.of(this.distribution).acknowledge({ id, reason });
    acknowledge(
      'AwsSolutions-CFR1',
      'The API serves backends and apps wherever they run; where callers are allowed from is the platform ' +
        "team's choice, made with a geo-match rule in the web ACL rather than a fixed distribution setting.",
    );
    acknowledge(
      'AwsSolutions-CFR3',
      'Every request is logged twice already: the web ACL logs each one CloudFront receives, blocked or not, ' +
        "with the viewer's address (aws-waf-logs-notify-<stage>-…), and API Gateway's access log has each one " +
        'that reaches the API. CloudFront standard logs would add an S3 bucket with ACLs for no new field.',
    );
    if (!props.domain) {
      acknowledge(
        'AwsSolutions-CFR4',
        'With the default *.cloudfront.net certificate CloudFront cannot enforce a minimum TLS version; set ' +
          'domains.http (a host name and its ACM certificate in us-east-1) to get TLS 1.2 as the minimum. ' +
          'API clients negotiate TLS 1.2 or later on their own; the origin leg is TLS 1.2 only.',
      );
    }
    this.host = props.domain?.name ?? this.distribution.distributionDomainName;
  }

  /** `https://{host}/api/v1` */
  get baseUrl(): string {
    return `https://${this.host}${API_BASE_PATH}`;
  }
}
