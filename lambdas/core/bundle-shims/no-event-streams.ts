/**
 * Stands in for `@smithy/core/event-streams` in the Lambda bundles (an esbuild alias, lib/constructs/bundling.ts).
 * Every SDK client's protocol `await import()`s it, so esbuild bundled its 15 KiB into every function, but only
 * operations with event streams load it, and none of the services the functions call (DynamoDB, SQS,
 * EventBridge, Scheduler, KMS, Secrets Manager, `@connections`) has one. Should a function ever call one, it
 * fails loudly here instead of silently.
 */
const notBundled = (): never => {
  throw new Error(
    'SDK event streams are not bundled into Lambda functions (lambdas/core/bundle-shims/no-event-streams.ts): remove the alias in lib/constructs/bundling.ts for a service that uses them',
  );
};

export class EventStreamSerde {
  constructor() {
    notBundled();
  }
}

export const eventStreamSerdeProvider = (): never => notBundled();
