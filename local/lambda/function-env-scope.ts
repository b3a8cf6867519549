import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Gives each locally invoked function its own view of `process.env`, as each Lambda function has its own
 * environment: inside an invocation (and the module loading of its INIT), a variable in `hidden` that is not
 * in the function's own environment reads as unset. Everything else (PATH, HOME, operator settings such as
 * `NOTIFY_WEBHOOK_RETRY_SCHEDULE`) reads through to the process. Writes inside an invocation stay in it.
 * Outside invocations (tests, stand-ins) process.env is unchanged.
 */
interface Scope {
  readonly own: Readonly<Record<string, string>>;
  readonly hidden: ReadonlySet<string>;
  /** Variables the function itself set or deleted during the invocation. */
  readonly written: Record<string, string | undefined>;
}

const scopes = new AsyncLocalStorage<Scope>();
let installed: { readonly real: NodeJS.ProcessEnv } | undefined;

/**
 * A function's own variable reads the process's current value when there is one (a test may repoint the
 * runtime's variables, e.g. the bus name, for every function at once), else its own value.
 */
const visible = (scope: Scope, real: NodeJS.ProcessEnv, name: string): string | undefined => {
  if (Object.hasOwn(scope.written, name)) return scope.written[name];
  if (Object.hasOwn(scope.own, name)) return real[name] ?? scope.own[name];
  return scope.hidden.has(name) ? undefined : real[name];
};

/** Replaces process.env by the scoped view (once per process); returns a function that puts the real one back. */
export const installFunctionEnvScopes = (): (() => void) => {
  if (installed) return () => {};
  const real = process.env;
  const names = (scope: Scope): string[] =>
    [...new Set([...Object.keys(real), ...Object.keys(scope.own), ...Object.keys(scope.written)])].filter(
      (name) => visible(scope, real, name) !== undefined,
    );
  process.env = new Proxy(real, {
    get: (target, name) => {
      const scope = scopes.getStore();
      return scope && typeof name === 'string' ? visible(scope, target, name) : Reflect.get(target, name);
    },
    set: (target, name, value) => {
      const scope = scopes.getStore();
      if (scope && typeof name === 'string') scope.written[name] = String(value);
      else Reflect.set(target, name, value);
      return true;
    },
    deleteProperty: (target, name) => {
      const scope = scopes.getStore();
      if (scope && typeof name === 'string') scope.written[name] = undefined;
      else Reflect.deleteProperty(target, name);
      return true;
    },
    has: (target, name) => {
      const scope = scopes.getStore();
      return scope && typeof name === 'string' ? visible(scope, target, name) !== undefined : name in target;
    },
    ownKeys: (target) => {
      const scope = scopes.getStore();
      return scope ? names(scope) : Reflect.ownKeys(target);
    },
    getOwnPropertyDescriptor: (target, name) => {
      const scope = scopes.getStore();
      if (!scope || typeof name !== 'string') return Reflect.getOwnPropertyDescriptor(target, name);
      const value = visible(scope, target, name);
      return value === undefined
        ? undefined
        : { value, writable: true, enumerable: true, configurable: true };
    },
  });
  installed = { real };
  return () => {
    process.env = real;
    installed = undefined;
  };
};

/**
 * Runs `body` with `own` as the function's environment and the `hidden` names unset; `fixed` variables (the
 * function's own credentials and name) win over the process's values.
 */
export const withFunctionEnv = <T>(
  own: Readonly<Record<string, string>>,
  hidden: ReadonlySet<string>,
  body: () => T,
  fixed: Readonly<Record<string, string>> = {},
): T => scopes.run({ own, hidden, written: { ...fixed } }, body);
