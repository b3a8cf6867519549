import { randomBytes } from 'node:crypto';

/**
 * An id shaped like API Gateway's request, connection and message ids (e.g. `L0SM9cOFvHcCIhw=`): 11 random
 * bytes in base64. `+` and `/` are swapped for letters so ids need no escaping in a URL path.
 */
export const apiGatewayId = (): string =>
  randomBytes(11).toString('base64').replaceAll('+', 'P').replaceAll('/', 'S');

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const pad = (value: number) => String(value).padStart(2, '0');

/** API Gateway's `requestContext.time` / `requestTime`: `12/Mar/2020:19:03:58 +0000`. */
export const apiGatewayTime = (epochMs: number): string => {
  const date = new Date(epochMs);
  return (
    `${pad(date.getUTCDate())}/${MONTHS[date.getUTCMonth()]}/${date.getUTCFullYear()}:` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`
  );
};

/** The client's address as API Gateway reports it (IPv4-mapped IPv6 addresses unwrapped). */
export const sourceIpOf = (remoteAddress: string | undefined): string =>
  (remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
