/**
 * Token validation for handlers: `tokenVerifier().verify(bearerToken(header))` yields the caller's Principal
 * or throws a 401 ServiceError. Rules and settings: docs/auth.md.
 */
import { authSettingName } from '../../../common/env';
import * as envNames from '../../../common/env-names';
import { type AuthConfig, authConfig, parseAuthConfig } from '../../../common/settings';
import { readSecretString } from '../clients-secrets';
import { DynamoDbTokenReplayStore } from './token-replay-store';
import { createTokenVerifier, type TokenVerifier } from './verifier';

export { type AuthConfig, authConfig, ConfigError, parseAuthConfig } from '../../../common/settings';
export { bearerToken } from './bearer';
export {
  DynamoDbTokenReplayStore,
  InMemoryTokenReplayStore,
  type TokenReplayStore,
} from './token-replay-store';
export {
  createTokenVerifier,
  JWKS_COOLDOWN_MS,
  type TokenVerifier,
  type TokenVerifierDeps,
} from './verifier';

let processVerifier: TokenVerifier | undefined;

const tokenReplayTableName = (config: AuthConfig): string | undefined => {
  if (config.replayProtection === 'off') return undefined;
  const name = envNames.tableName('tokenReplay');
  const tableName = process.env[name];
  if (!tableName) throw new Error(`${name} must be set when ${authSettingName('REPLAY_PROTECTION')} is on`);
  return tableName;
};

/**
 * Secrets a deployed stage keeps out of the environment: the variable naming the Secrets Manager secret, and the
 * setting its value stands for. Each is read once per instance, on the first verification.
 */
const SECRETS_IN_SECRETS_MANAGER = [
  // A development stage's HS256 key.
  { arnVariable: envNames.hs256SecretArn, setting: authSettingName('HS256_SECRET') },
  // The client secret the service authenticates with at the IdP's introspection endpoint.
  {
    arnVariable: envNames.introspectionClientSecretArn,
    setting: authSettingName('INTROSPECTION_CLIENT_SECRET'),
  },
] as const;

const verifierWithSecretsFromSecretsManager = (
  secrets: readonly { readonly arn: string; readonly setting: string }[],
): TokenVerifier => {
  let loading: Promise<TokenVerifier> | undefined;
  const load = async () => {
    const env: Record<string, string | undefined> = { ...process.env };
    for (const { arn, setting } of secrets) env[setting] = await readSecretString(arn);
    const config = parseAuthConfig(env);
    const tableName = tokenReplayTableName(config);
    return createTokenVerifier(config, {
      tokenReplayStore: tableName ? new DynamoDbTokenReplayStore(tableName) : undefined,
    });
  };
  return {
    verify: async (token) => {
      // A failed read is retried by the next request instead of poisoning the instance.
      loading ??= load().catch((error: unknown) => {
        loading = undefined;
        throw error;
      });
      return (await loading).verify(token);
    },
  };
};

/**
 * The process-wide verifier built from `authConfig()` on first use; its key set cache then lives as long as
 * the Lambda instance. With replay protection on, it uses the `tokenReplay` table (NOTIFY_TABLE_TOKEN_REPLAY).
 */
export const tokenVerifier = (): TokenVerifier => {
  const secrets = SECRETS_IN_SECRETS_MANAGER.flatMap(({ arnVariable, setting }) => {
    const arn = process.env[arnVariable];
    return arn && !process.env[setting] ? [{ arn, setting }] : [];
  });
  if (!processVerifier && secrets.length > 0)
    processVerifier = verifierWithSecretsFromSecretsManager(secrets);
  if (!processVerifier) {
    const config = authConfig();
    const tableName = tokenReplayTableName(config);
    processVerifier = createTokenVerifier(config, {
      tokenReplayStore: tableName ? new DynamoDbTokenReplayStore(tableName) : undefined,
    });
  }
  return processVerifier;
};
