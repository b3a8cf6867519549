import type { AuthConfig } from '../../../common/settings';
import { unauthorized } from '../errors';
import { describeBound, withinBound } from '../identifiers';
import type { Principal } from '../principal';
import { nameIssue } from '../text-policy';

/** A claim that is a space-separated string or an array of strings, as its list of non-empty strings. */
export const stringsOf = (value: unknown): string[] => {
  if (typeof value === 'string') return value.split(/\s+/).filter((part) => part !== '');
  if (Array.isArray(value))
    return value.filter((item): item is string => typeof item === 'string' && item !== '');
  return [];
};

/** `aud` as a list: a string or an array (RFC 7519 and RFC 7662 allow both). */
export const audiencesOf = (aud: unknown): string[] =>
  typeof aud === 'string' ? [aud] : Array.isArray(aud) ? stringsOf(aud) : [];

/** Who a checked token names, however it was checked (a JWT's claims or an introspection answer). */
export interface TokenIdentity {
  readonly audiences: readonly string[];
  /** The user id when the audience is the user audience. */
  readonly userId: string | undefined;
  /** The service name when the audience is the service audience. */
  readonly serviceId: string | undefined;
  readonly roles: readonly string[];
  readonly scopes: readonly string[];
  /** `exp`, seconds since the epoch. */
  readonly expiresAt: number;
}

/**
 * A user id or service name from a token, held to the rules of the names it becomes: within its bound, since it
 * is part of keys (lambdas/core/identifiers.ts), and a name as recipient ids are (a newline would forge log lines,
 * an unpaired surrogate be stored as U+FFFD). Else the token is refused (401).
 */
const assertTokenName = (kind: 'userId' | 'serviceName', name: string, label: string): void => {
  if (!withinBound(kind, name)) throw unauthorized(`${label} must be ${describeBound(kind)}`);
  const issue = nameIssue(name);
  if (issue) throw unauthorized(`${label} ${issue}`);
};

/** The audience decides the principal (docs/auth.md, validation rules); neither or both is a 401. */
export const principalFor = (config: AuthConfig, identity: TokenIdentity): Principal => {
  const forUser = identity.audiences.includes(config.audience);
  const forService = identity.audiences.includes(config.serviceAudience);
  // A token minted for both would be a user token that can also act as a service: refuse the ambiguity.
  if (forUser && forService) throw unauthorized('The token audience is not accepted');
  const { expiresAt } = identity;
  if (forUser) {
    if (!identity.userId) throw unauthorized('The token has no "sub" claim');
    assertTokenName('userId', identity.userId, 'The token "sub"');
    return {
      kind: 'user',
      id: identity.userId,
      roles: identity.roles,
      isAdmin: identity.roles.includes(config.adminRole),
      expiresAt,
      acceptedUntil: expiresAt + config.clockSkewSecs,
    };
  }
  if (forService) {
    if (!identity.serviceId) throw unauthorized('The token names no service');
    assertTokenName('serviceName', identity.serviceId, "The token's service name");
    return { kind: 'service', id: identity.serviceId, scopes: identity.scopes, expiresAt };
  }
  throw unauthorized('The token audience is not accepted');
};
