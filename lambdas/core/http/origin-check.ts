/**
 * When the HTTP API sits behind CloudFront + WAF, its execute-api URL still answers: without this check a
 * caller could go around the WAF. CloudFront adds a secret header (ORIGIN_VERIFY_HEADER) to every request it
 * forwards; the functions read the secret from Secrets Manager (NOTIFY_ORIGIN_SECRET_ARN) and refuse requests
 * without it. Without the variable (local runtime, stages without WAF) there is nothing to check.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import * as envNames from '../../../common/env-names';
import { readSecretString } from '../clients-secrets';
import { forbidden, unavailable } from '../errors';
import { logger } from '../logger';

/**
 * After a rotation CloudFront sends the new value while an instance still holds the old one: a mismatch
 * re-reads the secret, at most this often, so instances heal without a cold start and a flood of forged
 * headers costs at most one read per interval.
 */
export const ORIGIN_SECRET_REFRESH_MS = 60_000;

export interface OriginCheck {
  /** Resolves when `presented` is the current secret; throws 403 `forbidden` (or 503 if the secret cannot be read). */
  assert(presented: string | undefined): Promise<void>;
}

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** Constant-time comparison (digests have equal length whatever the inputs). */
const sameSecret = (presented: string, secret: string): boolean =>
  timingSafeEqual(digest(presented), digest(secret));

export const createOriginCheck = (
  readSecret: () => Promise<string>,
  now: () => number = Date.now,
): OriginCheck => {
  let secret: Promise<string> | undefined;
  let readAt = Number.NEGATIVE_INFINITY;
  const read = (): Promise<string> => {
    readAt = now();
    // A failed read is retried by the next request instead of poisoning the instance.
    const reading = readSecret().catch((error: unknown) => {
      if (secret === reading) secret = undefined;
      throw error;
    });
    secret = reading;
    return reading;
  };
  const current = async (fresh: boolean): Promise<string> => {
    try {
      return await (fresh || !secret ? read() : secret);
    } catch (error) {
      logger.error('origin secret unreadable', { error: error as Error });
      throw unavailable();
    }
  };
  const refused = () => forbidden('Requests must come through the API’s public (CloudFront) endpoint');
  return {
    assert: async (presented) => {
      if (!presented) throw refused();
      if (sameSecret(presented, await current(false))) return;
      if (now() - readAt >= ORIGIN_SECRET_REFRESH_MS && sameSecret(presented, await current(true))) return;
      throw refused();
    },
  };
};

// A static import, not `await import()`: esbuild cannot tree-shake a dynamically imported module's graph, which
// put the whole DynamoDB and Secrets Manager clients (every command's schema, +55 KiB) in every HTTP bundle.
// The client itself is still created on first use (lambdas/core/clients-secrets.ts).
const readFromSecretsManager = (secretId: string) => (): Promise<string> => readSecretString(secretId);

let processCheck: OriginCheck | null | undefined;

/** The process-wide check, or null when this function is not behind CloudFront. */
export const originCheck = (): OriginCheck | null => {
  if (processCheck === undefined) {
    const secretArn = process.env[envNames.originSecretArn];
    processCheck = secretArn ? createOriginCheck(readFromSecretsManager(secretArn)) : null;
  }
  return processCheck;
};
