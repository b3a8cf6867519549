import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DecryptCommand, GenerateDataKeyCommand } from '@aws-sdk/client-kms';
import * as envNames from '../../../common/env-names';
import { kms } from '../../core/clients-kms';

/**
 * Envelope encryption of webhook secrets: each secret is sealed with AES-256-GCM under its own data key, and
 * the data key is itself sealed by a key provider: a KMS key on AWS (GenerateDataKey / Decrypt, key id in
 * NOTIFY_WEBHOOK_KMS_KEY_ID), or a local 256-bit key (NOTIFY_WEBHOOK_LOCAL_KEY, base64) that the local
 * runtime sets. Which provider runs is configuration, not a code branch on the mode. The webhook id is bound
 * in as additional data (and as the KMS encryption context), so a sealed secret cannot be moved to another webhook.
 */
export const LOCAL_KEY_ENV = envNames.webhookLocalKey;

export interface SealedSecret {
  /** Envelope format version. */
  readonly v: 1;
  /** Which provider sealed the data key. */
  readonly kp: 'kms' | 'local';
  /** The sealed data key (base64). */
  readonly dk: string;
  /** iv (12 bytes) ‖ ciphertext ‖ GCM tag (16 bytes), base64. */
  readonly ct: string;
}

interface KeyProvider {
  readonly name: SealedSecret['kp'];
  newDataKey(context: string): Promise<{ plaintext: Buffer; sealed: Buffer }>;
  openDataKey(sealed: Buffer, context: string): Promise<Buffer>;
}

const gcmSeal = (key: Buffer, plaintext: Buffer, aad: string): Buffer => {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]);
};

const gcmOpen = (key: Buffer, sealed: Buffer, aad: string): Buffer => {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, 12));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  return Buffer.concat([decipher.update(sealed.subarray(12, sealed.length - 16)), decipher.final()]);
};

const kmsProvider = (keyId: string): KeyProvider => ({
  name: 'kms',
  newDataKey: async (context) => {
    const out = await kms().send(
      new GenerateDataKeyCommand({
        KeyId: keyId,
        KeySpec: 'AES_256',
        EncryptionContext: { purpose: 'webhook-secret', webhook_id: context },
      }),
    );
    if (!out.Plaintext || !out.CiphertextBlob) throw new Error('KMS returned no data key');
    return { plaintext: Buffer.from(out.Plaintext), sealed: Buffer.from(out.CiphertextBlob) };
  },
  openDataKey: async (sealed, context) => {
    const out = await kms().send(
      new DecryptCommand({
        KeyId: keyId,
        CiphertextBlob: sealed,
        EncryptionContext: { purpose: 'webhook-secret', webhook_id: context },
      }),
    );
    if (!out.Plaintext) throw new Error('KMS returned no plaintext');
    return Buffer.from(out.Plaintext);
  },
});

const localProvider = (encodedKey: string): KeyProvider => {
  const key = Buffer.from(encodedKey, 'base64');
  if (key.length !== 32) throw new Error(`${LOCAL_KEY_ENV} must be 32 bytes, base64-encoded`);
  return {
    name: 'local',
    newDataKey: async (context) => {
      const plaintext = randomBytes(32);
      return { plaintext, sealed: gcmSeal(key, plaintext, `data-key:${context}`) };
    },
    openDataKey: async (sealed, context) => gcmOpen(key, sealed, `data-key:${context}`),
  };
};

/** The configured provider: KMS when a key id is set, else the local key; neither is a deployment bug. */
const keyProvider = (): KeyProvider => {
  const kmsKeyId = process.env[envNames.webhookKmsKeyId];
  if (kmsKeyId) return kmsProvider(kmsKeyId);
  const localKey = process.env[LOCAL_KEY_ENV];
  if (localKey) return localProvider(localKey);
  throw new Error(
    `Neither ${envNames.webhookKmsKeyId} nor ${LOCAL_KEY_ENV} is set: cannot seal webhook secrets`,
  );
};

export const sealSecret = async (secret: string, webhookId: string): Promise<SealedSecret> => {
  const provider = keyProvider();
  const dataKey = await provider.newDataKey(webhookId);
  try {
    return {
      v: 1,
      kp: provider.name,
      dk: dataKey.sealed.toString('base64'),
      ct: gcmSeal(dataKey.plaintext, Buffer.from(secret, 'utf8'), `secret:${webhookId}`).toString('base64'),
    };
  } finally {
    dataKey.plaintext.fill(0);
  }
};

/** Opened secrets, kept briefly so a busy webhook costs one KMS Decrypt per few minutes, not per delivery. */
const openedCache = new Map<string, { secret: string; until: number }>();
const OPENED_CACHE_MS = 5 * 60_000;

export const openSecret = async (sealed: SealedSecret, webhookId: string): Promise<string> => {
  const cacheKey = `${webhookId}:${sealed.ct}`;
  const hit = openedCache.get(cacheKey);
  if (hit && hit.until > Date.now()) return hit.secret;
  const provider = keyProvider();
  if (provider.name !== sealed.kp) {
    throw new Error(
      `webhook ${webhookId}: secret sealed by the ${sealed.kp} key provider, ${provider.name} configured`,
    );
  }
  const dataKey = await provider.openDataKey(Buffer.from(sealed.dk, 'base64'), webhookId);
  try {
    const secret = gcmOpen(dataKey, Buffer.from(sealed.ct, 'base64'), `secret:${webhookId}`).toString('utf8');
    if (openedCache.size > 1000) openedCache.clear();
    openedCache.set(cacheKey, { secret, until: Date.now() + OPENED_CACHE_MS });
    return secret;
  } finally {
    dataKey.fill(0);
  }
};
