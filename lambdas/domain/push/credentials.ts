import { type PushProvider, type PushSettings, pushSettings } from '../../../common/settings';
import { readSecretString } from '../../core/clients-secrets';

/**
 * The app has no credentials for the provider on this stage (unknown app, provider not configured, or push not
 * configured at all). No device can be reached this way until the stage's settings change.
 */
export class PushCredentialsMissing extends Error {
  override name = 'PushCredentialsMissing';
}

/** Reads of a secret in flight or done, by secret id: once per container (a failed read is tried again). */
const secretReads = new Map<string, Promise<unknown>>();

const readJsonSecret = (secretId: string): Promise<unknown> => {
  let read = secretReads.get(secretId);
  if (!read) {
    read = readSecretString(secretId).then((text) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        // Never the secret's text: it may be most of a private key.
        throw new Error(`secret ${secretId} does not hold JSON`);
      }
    });
    read.catch(() => secretReads.delete(secretId));
    secretReads.set(secretId, read);
  }
  return read;
};

/** The app's name (null: the stage's default app) and its settings for the provider, or why there are none. */
export const pushAppOf = (appId: string | null, settings: PushSettings = pushSettings()) => {
  const name = appId ?? settings.defaultApp;
  if (name === undefined) throw new PushCredentialsMissing('push is not configured on this stage');
  const app = settings.apps.get(name);
  if (!app) throw new PushCredentialsMissing(`${name} is not an app configured for push on this stage`);
  return { name, app };
};

/**
 * The provider's credentials of the app (null: the stage's default app), as the secret's JSON holds them (the
 * provider's module parses them): read from Secrets Manager once per container on AWS, given in the settings
 * locally. Undefined for Expo without an access token. Throws PushCredentialsMissing when there are none.
 */
export const pushCredentials = async (
  appId: string | null,
  provider: PushProvider,
  settings: PushSettings = pushSettings(),
): Promise<unknown> => {
  const { name, app } = pushAppOf(appId, settings);
  const entry = app[provider];
  if (!entry)
    throw new PushCredentialsMissing(`the app ${name} has no ${provider} credentials on this stage`);
  const source = entry.source;
  if ('credentials' in source) return source.credentials;
  if ('secret' in source) return readJsonSecret(source.secret);
  return undefined;
};
