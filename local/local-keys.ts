import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { envNames } from '../common/env';

/** A random key kept in the data folder (so what it protects survives a restart), or random per run in memory. */
const persistedKey = (dataDir: string | undefined, fileName: string): string => {
  const file = dataDir ? join(dataDir, fileName) : undefined;
  if (file && existsSync(file)) return readFileSync(file, 'utf8').trim();
  const key = randomBytes(32).toString('base64');
  if (file) writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
};

/**
 * Local-mode settings of webhooks (docs/webhooks.md): the local key that stands in for the KMS key sealing
 * webhook secrets, and loopback receivers allowed (contract §3: plain http:// to loopback in local mode only).
 */
export const localWebhookEnv = (dataDir: string | undefined): Record<string, string> => ({
  NOTIFY_WEBHOOK_LOCAL_KEY: persistedKey(dataDir, 'webhook-secret-key'),
  NOTIFY_WEBHOOK_ALLOW_LOOPBACK: 'true',
});

/** The key that signs paging cursors, standing in for the stack's Secrets Manager secret (lambdas/core/cursor-mac.ts). */
export const localCursorEnv = (dataDir: string | undefined): Record<string, string> => ({
  [envNames.cursorKey]: persistedKey(dataDir, 'cursor-key'),
});
