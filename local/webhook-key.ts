import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Local-mode settings of webhooks (docs/webhooks.md): the local key that stands in for the KMS key sealing
 * webhook secrets (kept in the data folder so sealed secrets survive a restart; random per run in memory),
 * and loopback receivers allowed (contract §3: plain http:// to loopback in local mode only).
 */
export const localWebhookEnv = (dataDir: string | undefined): Record<string, string> => {
  let key: string;
  const file = dataDir ? join(dataDir, 'webhook-secret-key') : undefined;
  if (file && existsSync(file)) {
    key = readFileSync(file, 'utf8').trim();
  } else {
    key = randomBytes(32).toString('base64');
    if (file) writeFileSync(file, `${key}\n`, { mode: 0o600 });
  }
  return { NOTIFY_WEBHOOK_LOCAL_KEY: key, NOTIFY_WEBHOOK_ALLOW_LOOPBACK: 'true' };
};
