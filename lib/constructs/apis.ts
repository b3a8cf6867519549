import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration, WebSocketLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { CustomDomain } from '../config/stage-config';
import { acknowledgeRoutesWithoutAuthorizer } from '../nag-suppressions';
import {
  CORS_ALLOWED_HEADERS,
  CORS_ALLOWED_METHODS,
  CORS_EXPOSED_HEADERS,
  CORS_MAX_AGE_SECS,
  type CorsPolicy,
  DEFAULT_ROUTE_PATH,
  type HttpMethod,
  type WebSocketMockRoute,
} from '../wiring';
import { pascalCase } from './naming';

/** REST base path (docs/contract.md §1). */
export const API_BASE_PATH = '/api/v1';
/** WebSocket stage name: the URL ends in /ws, as it does locally (contract §1). */
export const WEBSOCKET_STAGE_NAME = 'ws';

interface AccessLogProps {
  readonly logRetentionDays: number;
  readonly removalPolicy: RemovalPolicy;
}

interface StageProps extends AccessLogProps {
  readonly stageName: string;
  /** Stage-wide default throttling of every route (API Gateway answers 429 beyond it). */
  readonly throttle: { readonly rateLimit: number; readonly burstLimit: number };
  /** A regional custom domain mapped to the stage; the execute-api URL keeps working. */
  readonly domain?: CustomDomain;
}

/** A regional API Gateway custom domain, TLS 1.2 at least, mapped to `stage` under `mappingKey`. */
const mapCustomDomain = (
  scope: Construct,
  domain: CustomDomain,
  api: apigw.IApi,
  stage: apigw.IStage,
  mappingKey?: string,
): apigw.DomainName => {
  const domainName = new apigw.DomainName(scope, 'CustomDomain', {
    domainName: domain.name,
    certificate: acm.Certificate.fromCertificateArn(scope, 'CustomDomainCertificate', domain.certificateArn),
    securityPolicy: apigw.SecurityPolicy.TLS_1_2,
  });
  new apigw.ApiMapping(scope, 'CustomDomainMapping', { api, domainName, stage, apiMappingKey: mappingKey });
  return domainName;
};

const accessLogs = (scope: Construct, props: AccessLogProps): apigw.IAccessLogSettings => ({
  destination: new apigw.LogGroupLogDestination(
    new logs.LogGroup(scope, 'AccessLogs', {
      retention: props.logRetentionDays as logs.RetentionDays,
      removalPolicy: props.removalPolicy,
    }),
  ),
  format: AccessLogFormat.jsonWithStandardFields(),
});

interface HttpApiProps extends StageProps {
  /** Origins whose pages may call the API; without it API Gateway answers no preflight. */
  readonly cors?: CorsPolicy;
}

/**
 * API Gateway adds these headers to every response (a function's own CORS headers are ignored). Preflights are
 * caught by the `$default` route, whose function answers them 204 (lambdas/handlers/http/fallback.ts).
 */
const corsPreflight = (cors: CorsPolicy): apigw.CorsPreflightOptions => ({
  allowOrigins: [...cors.allowedOrigins],
  allowHeaders: [...CORS_ALLOWED_HEADERS],
  allowMethods: CORS_ALLOWED_METHODS.map((method) => apigw.CorsHttpMethod[method]),
  exposeHeaders: [...CORS_EXPOSED_HEADERS],
  maxAge: Duration.seconds(CORS_MAX_AGE_SECS),
  // Tokens travel in Authorization, never in cookies; credentials would also forbid the `*` origin.
  allowCredentials: false,
});

/** The HTTP API: one route per declared HTTP route under /api/v1, payload format 2.0, access logs on. */
export class ServiceHttpApi extends Construct {
  readonly api: apigw.HttpApi;
  readonly stage: apigw.HttpStage;
  /** The custom domain (props.domain); its regionalDomainName is the target of the DNS record. */
  readonly customDomain: apigw.DomainName | undefined;

  constructor(scope: Construct, id: string, props: HttpApiProps) {
    super(scope, id);
    this.api = new apigw.HttpApi(this, 'Api', {
      description: `Notify ${props.stageName} REST API`,
      createDefaultStage: false,
      ...(props.cors ? { corsPreflight: corsPreflight(props.cors) } : {}),
    });
    acknowledgeRoutesWithoutAuthorizer(this.api);
    this.stage = new apigw.HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: props.throttle,
      accessLogSettings: accessLogs(this, props),
    });
    this.customDomain = props.domain && mapCustomDomain(this, props.domain, this.api, this.stage);
  }

  /** `https://…/api/v1`, on the custom domain when there is one. */
  get baseUrl(): string {
    if (this.customDomain) return `https://${this.customDomain.name}${API_BASE_PATH}`;
    return `${this.stage.url}${API_BASE_PATH.slice(1)}`;
  }

  addRoute(routeId: string, method: HttpMethod, path: string, handler: IFunction): void {
    const integration = new HttpLambdaIntegration(`${pascalCase(routeId)}Integration`, handler, {
      payloadFormatVersion: apigw.PayloadFormatVersion.VERSION_2_0,
    });
    if (path === DEFAULT_ROUTE_PATH) {
      if (method !== 'ANY')
        throw new Error(`lib/wiring: route ${routeId}: the $default route must use method ANY`);
      // API Gateway's catch-all: every request no other route matches, whatever its path or method.
      new apigw.HttpRoute(this.api, `${pascalCase(routeId)}Route`, {
        httpApi: this.api,
        routeKey: apigw.HttpRouteKey.DEFAULT,
        integration,
      });
      return;
    }
    this.api.addRoutes({
      path: `${API_BASE_PATH}${path}`,
      methods: [apigw.HttpMethod[method]],
      integration,
    });
  }
}

/** The WebSocket API: routes selected by the frame's `type`, a stage that deploys itself, access logs on. */
export class ServiceWebSocketApi extends Construct {
  readonly api: apigw.WebSocketApi;
  readonly stage: apigw.WebSocketStage;
  /** The custom domain (props.domain); its regionalDomainName is the target of the DNS record. */
  readonly customDomain: apigw.DomainName | undefined;

  constructor(scope: Construct, id: string, props: StageProps) {
    super(scope, id);
    this.api = new apigw.WebSocketApi(this, 'Api', {
      description: `Notify ${props.stageName} WebSocket API`,
      routeSelectionExpression: '$request.body.type',
    });
    acknowledgeRoutesWithoutAuthorizer(this.api);
    this.stage = new apigw.WebSocketStage(this, 'Stage', {
      webSocketApi: this.api,
      stageName: WEBSOCKET_STAGE_NAME,
      autoDeploy: true,
      throttle: props.throttle,
      accessLogSettings: accessLogs(this, props),
    });
    // Mapped under /ws, so the URL ends in /ws on the custom domain too.
    this.customDomain =
      props.domain && mapCustomDomain(this, props.domain, this.api, this.stage, WEBSOCKET_STAGE_NAME);
  }

  /** `wss://…/ws`, on the custom domain when there is one. */
  get url(): string {
    return this.customDomain ? `wss://${this.customDomain.name}/${WEBSOCKET_STAGE_NAME}` : this.stage.url;
  }

  addRoute(routeKey: string, handler: IFunction): void {
    this.api.addRoute(routeKey, {
      integration: new WebSocketLambdaIntegration(`${pascalCase(routeKey) || 'Route'}Integration`, handler),
      // A handler's returned body goes back to the client as a frame (acks, errors); $connect and
      // $disconnect answer with the handshake status only.
      returnResponse: routeKey !== '$connect' && routeKey !== '$disconnect',
    });
  }

  /**
   * A route API Gateway answers itself: a MOCK integration (its request template only sets the status) whose
   * integration response template is the fixed reply frame, returned through the route's `$default` route
   * response. No function runs; the message still counts as client activity (GetConnection LastActiveAt).
   */
  addMockRoute(route: WebSocketMockRoute): void {
    const id = pascalCase(route.routeKey) || 'Mock';
    const apiId = this.api.apiId;
    // A static template selection expression: every message uses the template keyed `$default`.
    const staticSelection = '\\$default';
    const integration = new apigw.CfnIntegration(this, `${id}MockIntegration`, {
      apiId,
      integrationType: 'MOCK',
      description: route.purpose,
      templateSelectionExpression: staticSelection,
      requestTemplates: { $default: JSON.stringify({ statusCode: 200 }) },
    });
    new apigw.CfnIntegrationResponse(this, `${id}MockIntegrationResponse`, {
      apiId,
      integrationId: integration.ref,
      integrationResponseKey: '$default',
      templateSelectionExpression: staticSelection,
      responseTemplates: { $default: JSON.stringify(route.reply) },
    });
    const cfnRoute = new apigw.CfnRoute(this, `${id}MockRoute`, {
      apiId,
      routeKey: route.routeKey,
      target: `integrations/${integration.ref}`,
      // Two-way: the integration response goes back to the client as a frame.
      routeResponseSelectionExpression: '$default',
    });
    Validations.of(cfnRoute).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Answered by API Gateway with a fixed frame, touching no data; the contract lets an unauthenticated connection send it',
    });
    new apigw.CfnRouteResponse(this, `${id}MockRouteResponse`, {
      apiId,
      routeId: cfnRoute.ref,
      routeResponseKey: '$default',
    });
  }
}
