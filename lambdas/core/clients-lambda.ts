import { LambdaClient } from '@aws-sdk/client-lambda';
import { lazy } from './clients';

export const lambda = /* @__PURE__ */ lazy(() => new LambdaClient({}));
