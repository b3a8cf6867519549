import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient, tableName } from '../../core/clients';

export type CheckResult = 'ok' | 'error';

/** Dependency checks: one cheap key lookup proves DynamoDB answers and the table exists. */
export const checkDependencies = async (): Promise<Record<string, CheckResult>> => {
  const dynamodb = await documentClient()
    .send(new GetCommand({ TableName: tableName('tokenReplay'), Key: { jti: '#health' } }))
    .then(
      () => 'ok' as const,
      () => 'error' as const,
    );
  return { dynamodb };
};

export const allOk = (checks: Record<string, CheckResult>): boolean =>
  Object.values(checks).every((result) => result === 'ok');
