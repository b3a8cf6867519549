import { ApiGatewayManagementApiClient } from '@aws-sdk/client-apigatewaymanagementapi';
import * as envNames from '../../common/env-names';
import { lazy, requiredEnv } from './clients';

/** The WebSocket API's `@connections` endpoint: the stage's callback URL, set by the stack or the local runtime. */
export const connectionsApi = /* @__PURE__ */ lazy(
  () => new ApiGatewayManagementApiClient({ endpoint: requiredEnv(envNames.wsCallbackUrl) }),
);
