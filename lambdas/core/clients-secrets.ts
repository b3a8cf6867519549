import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { lazy } from './clients';

const secretsManager = /* @__PURE__ */ lazy(() => new SecretsManagerClient({}));

/** The SecretString of a Secrets Manager secret (name or ARN); a secret without one is an error. */
export const readSecretString = async (secretId: string): Promise<string> => {
  const { SecretString } = await secretsManager().send(new GetSecretValueCommand({ SecretId: secretId }));
  if (!SecretString) throw new Error(`secret ${secretId} has no SecretString`);
  return SecretString;
};
