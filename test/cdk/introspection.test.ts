/**
 * Token introspection on a deployed stage: the stage file names the IdP's endpoint and client, and the client
 * secret only as a Secrets Manager secret, which the authenticating functions may read and nothing else holds.
 */
import { describe, expect, it } from 'vitest';
import { envNames } from '../../common/env';
import { StageConfigError } from '../../lib/config/stage-config';
import { prodSettings, synthesize } from './synth';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:notify/introspection-AbCdEf';

const introspection = {
  issuer: 'https://idp.test/',
  introspection_url: 'https://idp.test/oauth2/introspect',
  introspection_client_id: 'notify',
  introspection_client_secret: { secrets_manager: SECRET_ARN },
  introspection_cache_ttl: '2m',
  introspection_calls_per_sec: 50,
};

const stageWith = (auth: Record<string, unknown>) => prodSettings({ auth });

const errorOf = (action: () => unknown): string => {
  try {
    action();
  } catch (error) {
    if (error instanceof StageConfigError) return error.message;
    throw error;
  }
  throw new Error('expected a StageConfigError');
};

describe('introspection settings of a stage', () => {
  it('passes endpoint, client id and limits to the functions, the secret only by its Secrets Manager id', () => {
    const settings = stageWith(introspection);
    expect(settings.authEnv).toEqual({
      SERVICE__AUTH__ISSUER: 'https://idp.test/',
      SERVICE__AUTH__INTROSPECTION_URL: 'https://idp.test/oauth2/introspect',
      SERVICE__AUTH__INTROSPECTION_CLIENT_ID: 'notify',
      SERVICE__AUTH__INTROSPECTION_CACHE_TTL: '2m',
      SERVICE__AUTH__INTROSPECTION_CALLS_PER_SEC: '50',
    });
    expect(settings.introspectionClientSecret).toEqual({ secretId: SECRET_ARN });
  });

  it('refuses a literal client secret, a missing one, a missing client id and plain http', () => {
    expect(
      errorOf(() => stageWith({ ...introspection, introspection_client_secret: 'hunter2-hunter2' })),
    ).toContain('auth.introspection_client_secret must not be a literal secret');
    expect(
      errorOf(() => stageWith({ ...introspection, introspection_client_secret: 'hunter2-hunter2' })),
    ).not.toContain('hunter2');
    expect(errorOf(() => stageWith({ ...introspection, introspection_client_secret: undefined }))).toContain(
      'auth.introspection_client_secret [SERVICE__AUTH__INTROSPECTION_CLIENT_SECRET]: is required',
    );
    expect(errorOf(() => stageWith({ ...introspection, introspection_client_id: undefined }))).toContain(
      'auth.introspection_client_id [SERVICE__AUTH__INTROSPECTION_CLIENT_ID]: is required',
    );
    expect(
      errorOf(() => stageWith({ ...introspection, introspection_url: 'http://idp.test/oauth2/introspect' })),
    ).toContain('auth.introspection_url [SERVICE__AUTH__INTROSPECTION_URL]: expected an https:// URL');
  });

  it('accepts a stage without a key set when introspection checks its tokens, and refuses one with neither', () => {
    expect(stageWith(introspection).authEnv.SERVICE__AUTH__JWKS_URL).toBeUndefined();
    expect(errorOf(() => stageWith({ issuer: 'https://idp.test/' }))).toContain('missing auth.jwks_url');
  });

  it('gives every authenticating function the secret ARN and read access to it, and the template no secret', () => {
    const { stack, template } = synthesize(stageWith(introspection));
    const functions = Object.values(template.findResources('AWS::Lambda::Function')) as {
      Properties: { Environment?: { Variables?: Record<string, unknown> } };
    }[];
    const withSecret = functions.filter(
      (fn) => fn.Properties.Environment?.Variables?.[envNames.introspectionClientSecretArn] !== undefined,
    );
    const authenticating = functions.filter(
      (fn) => fn.Properties.Environment?.Variables?.SERVICE__AUTH__INTROSPECTION_URL !== undefined,
    );
    expect(authenticating.length).toBeGreaterThan(0);
    expect(withSecret).toHaveLength(authenticating.length);
    for (const fn of withSecret)
      expect(fn.Properties.Environment?.Variables?.[envNames.introspectionClientSecretArn]).toBe(SECRET_ARN);
    expect(stack.introspectionClientSecret?.secretArn).toBe(SECRET_ARN);
    const grants = Object.values(template.findResources('AWS::IAM::Policy')).filter((policy) =>
      JSON.stringify(policy).includes(SECRET_ARN),
    );
    expect(grants).toHaveLength(authenticating.length);
    expect(JSON.stringify(grants[0])).toContain('secretsmanager:GetSecretValue');
    expect(JSON.stringify(template.toJSON())).not.toContain('SERVICE__AUTH__INTROSPECTION_CLIENT_SECRET');
  }, 300_000);
});
