import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as envNames from '../../common/env-names';

/**
 * AWS clients, created once per process on first use. Each service's client lives in its own module
 * (clients-*.ts) so a function's bundle carries only the SDK clients it imports (cold start).
 * Endpoints come from the SDK's own configuration: AWS_ENDPOINT_URL_<SERVICE> points them at the local
 * stand-ins, so there is no local-mode branch here (docs/design.md principle 3).
 * Every module-level `lazy(…)` is marked as a pure call (`@__PURE__`): esbuild then drops a client nobody
 * calls (a shared module importing clients-kms.ts no longer puts the KMS client in every bundle importing it).
 */
export const lazy = <T>(create: () => T): (() => T) => {
  // One per function: on Lambda there is only ever one; the local runtime runs many functions in one process,
  // each with its own credentials.
  const byFunction = new Map<string | undefined, T>();
  return () => {
    const fn = process.env.AWS_LAMBDA_FUNCTION_NAME;
    let value = byFunction.get(fn);
    if (value === undefined) {
      value = create();
      byFunction.set(fn, value);
    }
    return value;
  };
};

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Uint8Array);

/**
 * A JSON object a client sent may have a key named `constructor` (`"data": {"constructor": "x"}`): the SDK's
 * marshaller takes that key for the object's class and refuses it ("Unsupported type passed"), or, with
 * `{"name": "String"}` under it, stores it as the wrong type. Such an object goes to it as a Map, which it stores as
 * the same map attribute; everything else is passed as it is.
 */
export const marshallable = (value: unknown): unknown => {
  if (Array.isArray(value)) {
    const items = value.map(marshallable);
    return items.some((item, index) => item !== value[index]) ? items : value;
  }
  if (!isPlainObject(value) || value instanceof Map || value instanceof Set) return value;
  const entries = Object.entries(value).map(([key, child]) => [key, marshallable(child)] as const);
  if (Object.hasOwn(value, 'constructor')) return new Map(entries);
  return entries.some(([key, child]) => child !== value[key]) ? Object.fromEntries(entries) : value;
};

export const dynamoDb = /* @__PURE__ */ lazy(() => new DynamoDBClient({}));
export const documentClient = /* @__PURE__ */ lazy(() => {
  const client = DynamoDBDocumentClient.from(dynamoDb(), {
    marshallOptions: { removeUndefinedValues: true },
  });
  // Before the document client marshals the input (its serialize step); only document commands use this stack.
  client.middlewareStack.add(
    (next) => (args) => next({ ...args, input: marshallable(args.input) as typeof args.input }),
    {
      step: 'initialize',
      name: 'notifyMarshallableJson',
    },
  );
  return client;
});
/** Reads a variable the deployment must set; a missing one is a wiring bug, so fail loudly. */
export const requiredEnv = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`Environment variable ${name} is not set`);
  return value;
};

export const tableName = (tableId: string): string => requiredEnv(envNames.tableName(tableId));
export const queueUrl = (queueId: string): string => requiredEnv(envNames.queueUrl(queueId));
export const functionArn = (functionId: string): string => requiredEnv(envNames.functionArn(functionId));
