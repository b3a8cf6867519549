import { KMSClient } from '@aws-sdk/client-kms';
import { lazy } from './clients';

export const kms = /* @__PURE__ */ lazy(() => new KMSClient({}));
