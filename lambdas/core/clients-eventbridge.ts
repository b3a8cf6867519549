import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { lazy } from './clients';

export const eventBridge = /* @__PURE__ */ lazy(() => new EventBridgeClient({}));
