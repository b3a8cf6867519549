import { AsyncLocalStorage } from 'node:async_hooks';
import { InvokeStoreBase } from '@aws/lambda-invoke-store';

type InvocationContext = Record<string | symbol, unknown>;

/**
 * Lambda's per-invocation store (`globalThis.awslambda.InvokeStore`) as the runtime of an environment with
 * concurrent invocations (Lambda Managed Instances) provides it: one context per invocation on an
 * AsyncLocalStorage. With `AWS_LAMBDA_MAX_CONCURRENCY` set, Powertools keeps each invocation's log keys and
 * Lambda context in it, so invocations running at once in one process never write each other's keys.
 */
class ConcurrentInvokeStore extends InvokeStoreBase {
  private readonly contexts = new AsyncLocalStorage<InvocationContext>();

  getContext(): InvocationContext | undefined {
    return this.contexts.getStore();
  }

  hasContext(): boolean {
    return this.contexts.getStore() !== undefined;
  }

  get<T = unknown>(key: string | symbol): T | undefined {
    return this.contexts.getStore()?.[key] as T | undefined;
  }

  set<T = unknown>(key: string | symbol, value: T): void {
    if (this.isProtectedKey(key))
      throw new Error(`Cannot modify protected Lambda context field: ${String(key)}`);
    const context = this.contexts.getStore();
    if (!context) throw new Error('No context available');
    context[key] = value;
  }

  run<T>(context: InvocationContext, fn: () => T): T {
    return this.contexts.run(context, fn);
  }
}

/** What the runtime sets in every function's environment, as Lambda does where invocations run concurrently. */
export const CONCURRENT_INVOCATIONS_ENV = { AWS_LAMBDA_MAX_CONCURRENCY: '64' } as const;

let store: ConcurrentInvokeStore | undefined;

/**
 * The process's invoke store, installed on first use in place of any other: an AWS SDK client used before the
 * runtime started may have installed a single-invocation one, which would share its context between invocations.
 */
export const invokeStore = (): InvokeStoreBase => {
  if (!store) {
    store = new ConcurrentInvokeStore();
    const global = globalThis as { awslambda?: { InvokeStore?: InvokeStoreBase } };
    global.awslambda = { ...global.awslambda, InvokeStore: store };
  }
  return store;
};

/** Runs `body` as the invocation `requestId`, in a context of its own. */
export const inInvocation = <T>(requestId: string, body: () => T): T =>
  invokeStore().run({ [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: requestId }, body);
