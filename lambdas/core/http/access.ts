import type { Access } from '../../../lib/wiring';
import { forbidden } from '../errors';
import type { Principal } from '../principal';

/** Checks the caller against the route's declared access (contract §2: wrong kind or scope → 403). */
export const authorize = (access: Access, principal: Principal): void => {
  if ('public' in access) return;
  if (principal.kind === 'user') {
    if (access.users === 'any' || (access.users === 'admin' && principal.isAdmin)) return;
    throw forbidden(
      access.users ? 'This operation needs the admin role' : 'This operation needs a service token',
    );
  }
  if (access.services === 'any' || (access.services && principal.scopes.includes(access.services))) return;
  throw forbidden(
    access.services
      ? `This operation needs the ${access.services} scope`
      : 'This operation needs a user token',
  );
};
