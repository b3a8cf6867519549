import { forbidden } from './errors';

/** Who is calling, as established by token validation (contract §2). */
export type Principal = UserPrincipal | ServicePrincipal;

export interface UserPrincipal {
  readonly kind: 'user';
  /** The token's `sub`. */
  readonly id: string;
  readonly roles: readonly string[];
  /** Whether `roles` contains the configured admin role. */
  readonly isAdmin: boolean;
  /** Seconds since the epoch at which the token expires. */
  readonly expiresAt: number;
  /**
   * Seconds since the epoch until which the token passes verification: `expiresAt` plus the tolerated clock
   * skew. Whatever outlives the request (a WebSocket connection) must last until this, not `expiresAt`.
   */
  readonly acceptedUntil: number;
}

export interface ServicePrincipal {
  readonly kind: 'service';
  /** `service` claim, else `sub`. */
  readonly id: string;
  readonly scopes: readonly string[];
  readonly expiresAt: number;
}

/** The source of what users send themselves; no service may be named so (it would pass for a user). */
export const USER_SOURCE = 'user';

/** The source of the events Notify publishes itself (`notify.device.pruned`); no service may be named so either. */
export const NOTIFY_SOURCE = 'notify';

/** Names no service may have: what it sends would pass for a user's own or for Notify's. */
const RESERVED_SERVICE_NAMES: readonly string[] = [USER_SOURCE, NOTIFY_SOURCE];

/**
 * The rule `sourceOf` enforces, in the words of the API documents: the request schemas describe `source` with it,
 * so the description and the check cannot drift apart.
 */
export const SOURCE_RULE =
  "the calling service's own name or a dotted sub-source of it (`billing` or `billing.invoices` for the service " +
  "`billing`; the name is the token's `service` claim, else its `sub`), `user` for a user; any other value is a 403, " +
  'and so is anything sent by a service named `user` or `notify` (the sources of users and of Notify itself)';

/**
 * Whose data a request with a `user_id` names (preferences, subscriptions), in the words of the API documents.
 */
export const NAMED_USER_RULE =
  'A user leaves it out or names itself (another user is a 403); a service names the user (without it, a 400).';

/**
 * The `source` a caller may state (notifications and events): a service its own name or a dotted sub-source of it
 * (`billing`, `billing.invoices`), a user `user`; absent, that name. Anything else would let one caller speak as
 * another, so it is a 403 (docs/notifications.md, "source"); so is a service named `user` or `notify`.
 */
export const sourceOf = (principal: Principal, stated: string | undefined): string => {
  if (principal.kind === 'service' && RESERVED_SERVICE_NAMES.includes(principal.id)) {
    throw forbidden(
      `The service name "${principal.id}" is reserved: what it sends would read as ${principal.id === USER_SOURCE ? "a user's own" : "Notify's own"} (source "${principal.id}")`,
    );
  }
  const own = principal.kind === 'service' ? principal.id : USER_SOURCE;
  if (stated === undefined || stated === own) return own;
  if (principal.kind === 'service' && stated.startsWith(`${own}.`)) return stated;
  throw forbidden(
    principal.kind === 'service'
      ? `source must be the calling service's name "${own}" or start with "${own}."`
      : 'source of a user\'s notification is "user"',
  );
};
