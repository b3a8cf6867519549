/**
 * Push credentials on a deployed stage: the stage file names one Secrets Manager secret per app and provider; the
 * functions that declare `push` get the names (SERVICE__PUSH__APPS), and read access to exactly the secrets of
 * the providers they read, nothing else.
 */
import { describe, expect, it } from 'vitest';
import { pushSettingName } from '../../common/env';
import { StageConfigError } from '../../lib/config/stage-config';
import { prodSettings, synthesize } from './synth';

const ARN = (name: string) =>
  `arn:aws:secretsmanager:eu-west-1:123456789012:secret:notify/push/${name}-AbCdEf`;

const push = {
  default_app: 'com.acme.app',
  apps: {
    'com.acme.app': {
      fcm: { secret: ARN('app-fcm') },
      apns: { secret: ARN('app-apns'), environment: 'sandbox' },
      webpush: { secret: ARN('app-webpush') },
      expo: {},
    },
    'com.acme.web': { webpush: { secret: 'notify/push/web-webpush' } },
  },
};

const errorOf = (action: () => unknown): string => {
  try {
    action();
  } catch (error) {
    if (error instanceof StageConfigError) return error.message;
    throw error;
  }
  throw new Error('expected a StageConfigError');
};

describe('push settings of a stage', () => {
  it('become the functions’ SERVICE__PUSH__APPS (secret names only) and default app', () => {
    const settings = prodSettings({ push });
    expect(settings.push?.defaultApp).toBe('com.acme.app');
    expect(JSON.parse(settings.push?.env[pushSettingName('APPS')] ?? '')).toEqual({
      'com.acme.app': {
        fcm: { secret: ARN('app-fcm') },
        apns: { secret: ARN('app-apns'), environment: 'sandbox' },
        webpush: { secret: ARN('app-webpush') },
        expo: {},
      },
      'com.acme.web': { webpush: { secret: 'notify/push/web-webpush' } },
    });
    expect(settings.push?.env[pushSettingName('DEFAULT_APP')]).toBe('com.acme.app');
    expect(prodSettings().push).toBeUndefined();
  });

  it('refuse a missing secret, a placeholder, inline credentials, an unknown default app, an empty app', () => {
    const app = (providers: Record<string, unknown>) => prodSettings({ push: { apps: { a: providers } } });
    expect(errorOf(() => app({ fcm: {} }))).toContain('missing push.apps.a.fcm.secret');
    expect(errorOf(() => app({ apns: { secret: '<the APNs secret>' } }))).toContain(
      'placeholder values in push.apps.a.apns.secret (<the APNs secret>): set your own before deploying',
    );
    expect(errorOf(() => app({ webpush: { secret: 'notify/push/example-webpush' } }))).toContain(
      'placeholder values in push.apps.a.webpush.secret',
    );
    // Credentials belong in Secrets Manager, never in the stage file (and the template).
    const inline = errorOf(() => app({ fcm: { secret: 's', private_key: 'PEMTEXT' } }));
    expect(inline).toContain('push.apps.a.fcm');
    expect(inline).not.toContain('PEMTEXT');
    expect(errorOf(() => app({}))).toContain('push.apps.a: name at least one of fcm, apns, webpush, expo');
    expect(
      errorOf(() => prodSettings({ push: { default_app: 'b', apps: { a: { fcm: { secret: 's' } } } } })),
    ).toContain('push.default_app: default_app must be one of apps');
    expect(
      errorOf(() =>
        prodSettings({ push: { apps: { a: { fcm: { secret: 's' } }, b: { fcm: { secret: 's' } } } } }),
      ),
    ).toContain('missing push.default_app');
    expect(errorOf(() => app({ apns: { secret: 's', environment: 'dev' } }))).toContain(
      'push.apps.a.apns.environment',
    );
  });

  it('grant each push function read access to exactly the secrets of the providers it reads', () => {
    const { template } = synthesize(prodSettings({ push }));
    const functions = template.findResources('AWS::Lambda::Function') as Record<
      string,
      { Properties: { Environment?: { Variables?: Record<string, unknown> }; Role: unknown } }
    >;
    const withPush = Object.entries(functions).filter(
      ([, fn]) => fn.Properties.Environment?.Variables?.[pushSettingName('APPS')] !== undefined,
    );
    // Registration (which apps exist) and the VAPID key route; the pipeline's sender adds itself by declaration.
    expect(withPush.length).toBeGreaterThanOrEqual(2);
    const policies = Object.values(template.findResources('AWS::IAM::Policy')) as {
      Properties: {
        Roles: unknown[];
        PolicyDocument: { Statement: { Action: unknown; Resource: unknown }[] };
      };
    }[];
    /** The push secrets (the text of the resources) the function's role may read. */
    const secretsReadBy = (fn: { Properties: { Role: unknown } }) => {
      const roleId = (fn.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
      return policies
        .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(`"${roleId}"`))
        .flatMap((policy) => policy.Properties.PolicyDocument.Statement)
        .filter((statement) => JSON.stringify(statement.Action).includes('secretsmanager:GetSecretValue'))
        .map((statement) => JSON.stringify(statement.Resource))
        .filter((resource) => resource.includes('notify/push/'))
        .join();
    };
    const byId = (path: string) => {
      const entry = Object.entries(functions).find(([id]) => id.startsWith(path));
      if (!entry) throw new Error(`no function ${path}`);
      return entry[1];
    };
    const vapid = byId('HttpPushVapidPublicKey');
    const reads = secretsReadBy(vapid);
    expect(reads).toContain('notify/push/app-webpush');
    expect(reads).toContain('notify/push/web-webpush');
    expect(reads).not.toContain('app-fcm');
    expect(reads).not.toContain('app-apns');
    const register = byId('HttpDevicesRegister');
    expect(register.Properties.Environment?.Variables?.[pushSettingName('APPS')]).toBeDefined();
    expect(secretsReadBy(register)).toBe('');
    // Functions that do not declare push learn nothing of it.
    const others = Object.entries(functions).filter(([id]) => id.startsWith('HttpNotificationsCreate'));
    expect(others.length).toBe(1);
    expect(others[0]?.[1].Properties.Environment?.Variables?.[pushSettingName('APPS')]).toBeUndefined();
  }, 300_000);
});
