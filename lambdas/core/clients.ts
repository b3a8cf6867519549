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

export const dynamoDb = /* @__PURE__ */ lazy(() => new DynamoDBClient({}));
export const documentClient = /* @__PURE__ */ lazy(() =>
  DynamoDBDocumentClient.from(dynamoDb(), { marshallOptions: { removeUndefinedValues: true } }),
);
/** Reads a variable the deployment must set; a missing one is a wiring bug, so fail loudly. */
export const requiredEnv = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`Environment variable ${name} is not set`);
  return value;
};

export const tableName = (tableId: string): string => requiredEnv(envNames.tableName(tableId));
export const queueUrl = (queueId: string): string => requiredEnv(envNames.queueUrl(queueId));
export const functionArn = (functionId: string): string => requiredEnv(envNames.functionArn(functionId));
