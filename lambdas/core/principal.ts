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
}

export interface ServicePrincipal {
  readonly kind: 'service';
  /** `service` claim, else `sub`. */
  readonly id: string;
  readonly scopes: readonly string[];
  readonly expiresAt: number;
}

export const hasScope = (principal: Principal, scope: string): boolean =>
  principal.kind === 'service' && principal.scopes.includes(scope);
