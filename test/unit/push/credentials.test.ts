/**
 * Push credentials per app: on a deployed stage the settings name a Secrets Manager secret per app and provider,
 * read once per container (through the real SDK client, against a local GetSecretValue server); locally the
 * settings hold the generated credentials themselves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pushSettingName } from '../../../common/env';
import { parsePushSettings } from '../../../common/settings';
import { type SecretsManagerServer, startSecretsManager } from '../../support/secrets-manager';

const FCM_SECRET = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:notify/push/app/fcm-AbCdEf';
const SERVICE_ACCOUNT = { type: 'service_account', project_id: 'notify-test', private_key: 'PEM' };

const settings = parsePushSettings({
  [pushSettingName('APPS')]: JSON.stringify({
    app: { fcm: { secret: FCM_SECRET }, expo: {} },
    local: {
      webpush: { credentials: { public_key: 'BPub', private_key: 'priv', subject: 'mailto:a@b.test' } },
    },
  }),
  [pushSettingName('DEFAULT_APP')]: 'app',
});

describe('pushCredentials', () => {
  let secretsManager: SecretsManagerServer;
  const saved = { ...process.env };

  beforeAll(async () => {
    secretsManager = await startSecretsManager(JSON.stringify(SERVICE_ACCOUNT));
    Object.assign(process.env, secretsManager.clientEnv);
  });
  afterAll(async () => {
    process.env = saved;
    await secretsManager.close();
  });

  it('reads an app’s secret once per container (the default app for null), retrying a failed read', async () => {
    const { pushCredentials } = await import('../../../lambdas/domain/push/credentials');
    secretsManager.failNext();
    await expect(pushCredentials(null, 'fcm', settings)).rejects.toThrow();
    expect(await pushCredentials(null, 'fcm', settings)).toEqual(SERVICE_ACCOUNT);
    expect(await pushCredentials('app', 'fcm', settings)).toEqual(SERVICE_ACCOUNT);
    expect(secretsManager.reads).toEqual([FCM_SECRET, FCM_SECRET]);
  });

  it('gives the credentials the settings hold (the local runtime’s), and none for Expo without a token', async () => {
    const { pushCredentials } = await import('../../../lambdas/domain/push/credentials');
    expect(await pushCredentials('local', 'webpush', settings)).toMatchObject({ public_key: 'BPub' });
    expect(await pushCredentials('app', 'expo', settings)).toBeUndefined();
  });

  it('names what is missing: an unknown app, a provider the app lacks, push not configured', async () => {
    const { pushCredentials, PushCredentialsMissing } = await import(
      '../../../lambdas/domain/push/credentials'
    );
    await expect(pushCredentials('nope', 'fcm', settings)).rejects.toThrow(
      new PushCredentialsMissing('nope is not an app configured for push on this stage'),
    );
    await expect(pushCredentials('app', 'apns', settings)).rejects.toThrow(
      new PushCredentialsMissing('the app app has no apns credentials on this stage'),
    );
    await expect(pushCredentials(null, 'fcm', parsePushSettings({}))).rejects.toThrow(
      new PushCredentialsMissing('push is not configured on this stage'),
    );
  });

  it('refuses a secret that is not JSON without echoing it', async () => {
    const { pushCredentials } = await import('../../../lambdas/domain/push/credentials');
    secretsManager.setSecret('-----BEGIN PRIVATE KEY----- not json');
    const other = parsePushSettings({
      [pushSettingName('APPS')]: JSON.stringify({ other: { apns: { secret: 'notify/push/other/apns' } } }),
    });
    const error = await pushCredentials('other', 'apns', other).catch((caught: Error) => caught);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('secret notify/push/other/apns does not hold JSON');
  });
});

describe('parsePushSettings', () => {
  it('takes apps of secrets or credentials, URLs and a CA, and a default app', () => {
    expect(settings.defaultApp).toBe('app');
    expect(settings.apps.get('app')).toEqual({
      fcm: { source: { secret: FCM_SECRET } },
      expo: { source: { none: true } },
    });
    // One app is the default without naming it.
    const single = parsePushSettings({
      [pushSettingName('APPS')]: JSON.stringify({ solo: { apns: { secret: 's', environment: 'sandbox' } } }),
      [pushSettingName('APNS_URL')]: 'https://127.0.0.1:4443',
    });
    expect(single.defaultApp).toBe('solo');
    expect(single.apps.get('solo')?.apns).toEqual({ source: { secret: 's' }, apnsEnvironment: 'sandbox' });
    expect(single.urls.apns).toBe('https://127.0.0.1:4443');
  });

  it('throws naming each bad variable, never echoing credentials', () => {
    const attempt = (env: Record<string, string>) => {
      try {
        parsePushSettings(env);
        return 'accepted';
      } catch (error) {
        return (error as Error).message;
      }
    };
    const apps = pushSettingName('APPS');
    expect(attempt({ [apps]: 'not json' })).toBe(`${apps}: expected a JSON object of app ids`);
    expect(attempt({ [apps]: JSON.stringify({ a: { fcm: {} } }) })).toBe(
      `${apps}: a.fcm: expected secret (a Secrets Manager secret name or ARN)`,
    );
    expect(attempt({ [apps]: JSON.stringify({ a: { gcm: { secret: 's' } } }) })).toContain(
      'a.gcm: not a provider',
    );
    expect(
      attempt({ [apps]: JSON.stringify({ a: { apns: { secret: 's', environment: 'dev' } } }) }),
    ).toContain('a.apns: environment: expected sandbox or production');
    expect(
      attempt({ [apps]: JSON.stringify({ a: { fcm: { secret: 's' } }, b: { fcm: { secret: 's' } } }) }),
    ).toBe(`${pushSettingName('DEFAULT_APP')}: is required with more than one app in ${apps}`);
    expect(attempt({ [pushSettingName('DEFAULT_APP')]: 'x' })).toContain('"x" is not an app');
    expect(attempt({ [pushSettingName('FCM_URL')]: 'http://fcm.test' })).toContain('https://');
    expect(attempt({ [pushSettingName('APNS_CA')]: 'secret-ish' })).toBe(
      `${pushSettingName('APNS_CA')}: expected a PEM certificate`,
    );
    const withKey = attempt({
      [apps]: JSON.stringify({ a: { fcm: { secret: 's', private_key: 'KEYTEXT' } } }),
    });
    expect(withKey).toContain('unknown field private_key');
    expect(withKey).not.toContain('KEYTEXT');
  });
});
