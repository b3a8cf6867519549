import type { RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration, WebSocketLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { acknowledgeRoutesWithoutAuthorizer } from '../nag-suppressions';
import type { HttpMethod } from '../wiring';
import { pascalCase } from './naming';

/** REST base path (interface.md §1). */
export const API_BASE_PATH = '/api/v1';
/** WebSocket stage name: the URL ends in /ws, as it does locally (contract §1). */
export const WEBSOCKET_STAGE_NAME = 'ws';

interface AccessLogProps {
  readonly logRetentionDays: number;
  readonly removalPolicy: RemovalPolicy;
}

const accessLogs = (scope: Construct, props: AccessLogProps): apigw.IAccessLogSettings => ({
  destination: new apigw.LogGroupLogDestination(
    new logs.LogGroup(scope, 'AccessLogs', {
      retention: props.logRetentionDays as logs.RetentionDays,
      removalPolicy: props.removalPolicy,
    }),
  ),
  format: AccessLogFormat.jsonWithStandardFields(),
});

/** The HTTP API: one route per declared HTTP route under /api/v1, payload format 2.0, access logs on. */
export class ServiceHttpApi extends Construct {
  readonly api: apigw.HttpApi;
  readonly stage: apigw.HttpStage;

  constructor(scope: Construct, id: string, props: AccessLogProps & { readonly stageName: string }) {
    super(scope, id);
    this.api = new apigw.HttpApi(this, 'Api', {
      description: `Notify ${props.stageName} REST API`,
      createDefaultStage: false,
    });
    acknowledgeRoutesWithoutAuthorizer(this.api);
    this.stage = new apigw.HttpStage(this, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      accessLogSettings: accessLogs(this, props),
    });
  }

  /** `https://…/api/v1` */
  get baseUrl(): string {
    return `${this.stage.url}${API_BASE_PATH.slice(1)}`;
  }

  addRoute(routeId: string, method: HttpMethod, path: string, handler: IFunction): void {
    this.api.addRoutes({
      path: `${API_BASE_PATH}${path}`,
      methods: [apigw.HttpMethod[method]],
      integration: new HttpLambdaIntegration(`${pascalCase(routeId)}Integration`, handler, {
        payloadFormatVersion: apigw.PayloadFormatVersion.VERSION_2_0,
      }),
    });
  }
}

/** The WebSocket API: routes selected by the frame's `type`, a stage that deploys itself, access logs on. */
export class ServiceWebSocketApi extends Construct {
  readonly api: apigw.WebSocketApi;
  readonly stage: apigw.WebSocketStage;

  constructor(scope: Construct, id: string, props: AccessLogProps & { readonly stageName: string }) {
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
      accessLogSettings: accessLogs(this, props),
    });
  }

  addRoute(routeKey: string, handler: IFunction): void {
    this.api.addRoute(routeKey, {
      integration: new WebSocketLambdaIntegration(`${pascalCase(routeKey) || 'Route'}Integration`, handler),
      // A handler's returned body goes back to the client as a frame (acks, errors); $connect and
      // $disconnect answer with the handshake status only.
      returnResponse: routeKey !== '$connect' && routeKey !== '$disconnect',
    });
  }
}
