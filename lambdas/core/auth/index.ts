/**
 * Token validation for handlers: `tokenVerifier().verify(bearerToken(header))` yields the caller's Principal
 * or throws a 401 ServiceError. Rules and settings: docs/auth.md.
 */
import { envNames } from '../../../lib/wiring/env';
import { type AuthConfig, authConfig } from '../config';
import { DynamoDbReplayStore } from './replay-store';
import { createTokenVerifier, type TokenVerifier } from './verifier';

export { type AuthConfig, authConfig, ConfigError, parseAuthConfig } from '../config';
export { bearerToken } from './bearer';
export { DynamoDbReplayStore, InMemoryReplayStore, type ReplayStore } from './replay-store';
export {
  createTokenVerifier,
  JWKS_COOLDOWN_MS,
  type TokenVerifier,
  type TokenVerifierDeps,
} from './verifier';

let processVerifier: TokenVerifier | undefined;

const replayTableName = (config: AuthConfig): string | undefined => {
  if (!config.replayProtection) return undefined;
  const name = envNames.tableName('replay');
  const tableName = process.env[name];
  if (!tableName) throw new Error(`${name} must be set when SERVICE__AUTH__REPLAY_PROTECTION is on`);
  return tableName;
};

/**
 * The process-wide verifier built from `authConfig()` on first use; its key set cache then lives as long as
 * the Lambda instance. With replay protection on, it uses the `replay` table (NOTIFY_TABLE_REPLAY).
 */
export const tokenVerifier = (): TokenVerifier => {
  if (!processVerifier) {
    const config = authConfig();
    const tableName = replayTableName(config);
    processVerifier = createTokenVerifier(config, {
      replayStore: tableName ? new DynamoDbReplayStore(tableName) : undefined,
    });
  }
  return processVerifier;
};
