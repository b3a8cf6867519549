import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { lazy } from './clients';

export const eventBridge = lazy(() => new EventBridgeClient({}));
