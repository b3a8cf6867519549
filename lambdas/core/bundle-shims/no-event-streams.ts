/**
 * Stands in for `@smithy/core/event-streams` in the Lambda bundles (an esbuild alias, lib/constructs/bundling.ts).
 * Every SDK client's protocol `await import()`s it, so esbuild bundled its 15 KiB into every function, but only
 * operations with event streams load it, and none of the operations the functions call (DynamoDB, SQS,
 * EventBridge, Scheduler, KMS, Secrets Manager, `@connections`, Lambda's `Invoke`) has one. Should a function ever
 * call one, it fails loudly here instead of silently.
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

/**
 * The Lambda client resolves its event stream marshaller when it is made (for `InvokeWithResponseStream`): here one
 * that fails when used, not when the client is made. Not enumerable, so a copy of the config does not read it.
 */
export const resolveEventStreamSerdeConfig = <T extends object>(input: T): T =>
  Object.defineProperty(input, 'eventStreamMarshaller', {
    get: notBundled,
    enumerable: false,
    configurable: true,
  });
