import { SQSClient } from '@aws-sdk/client-sqs';
import { lazy } from './clients';

export const sqs = /* @__PURE__ */ lazy(() => new SQSClient({}));
