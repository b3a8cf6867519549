import { isIP } from 'node:net';
import {
  AddressRefused,
  addressRefusal,
  bareHost,
  type ResolvedAddress,
  resolveAllowed,
} from './address-policy';

/**
 * Contract §3: `https://` only; plain `http://` only to a loopback address when loopback is allowed (local mode);
 * no credentials in the URL; the host must resolve only to addresses a webhook may reach.
 * Returns the URL and the checked address to connect to; throws AddressRefused with a reason otherwise.
 */
export const checkWebhookUrl = async (
  raw: string,
  allowLoopback: boolean,
): Promise<{ url: URL; resolved: ResolvedAddress }> => {
  // The URL parser would silently drop these; a URL is stored and shown exactly as it will be used.
  if (/\s/.test(raw)) throw new AddressRefused('must not contain whitespace');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AddressRefused('must be an absolute https:// URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new AddressRefused('must be an https:// URL');
  if (url.protocol === 'http:' && !allowLoopback) throw new AddressRefused('must be an https:// URL');
  if (url.username || url.password) throw new AddressRefused('must not carry credentials');
  if (url.port === '0') throw new AddressRefused('must not use port 0');
  const resolved = await resolveAllowed(url.hostname, allowLoopback);
  if (url.protocol === 'http:' && addressRefusal(resolved.address, false) === undefined) {
    throw new AddressRefused('plain http:// is allowed only to a loopback address');
  }
  return { url, resolved };
};

/** Whether the URL's host is an IP literal (then there is no name for TLS SNI). */
export const hostIsLiteral = (url: URL): boolean => isIP(bareHost(url.hostname)) !== 0;
