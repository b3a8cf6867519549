import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { lazy } from './clients';

export const scheduler = /* @__PURE__ */ lazy(() => new SchedulerClient({}));
