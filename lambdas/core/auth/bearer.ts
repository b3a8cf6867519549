/** RFC 6750 b64token: the characters a bearer token may contain. */
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/** The token of an `Authorization: Bearer <token>` header value (scheme case-insensitive); undefined when malformed. */
export const bearerToken = (headerValue: string | undefined | null): string | undefined => {
  if (typeof headerValue !== 'string') return undefined;
  return BEARER.exec(headerValue.trim())?.[1];
};
