import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Which addresses a webhook may reach. Checked when a webhook is created and again at every delivery, after
 * DNS resolution, on the very address the request then connects to (no DNS-rebinding window).
 */
const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** Never reachable: private, link-local (cloud metadata 169.254.169.254 included), reserved, multicast. */
const forbidden = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['169.254.0.0', 16], // link-local, instance metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  forbidden.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 96], // unspecified and IPv4-compatible (deprecated; embeds any IPv4)
  // IPv4-mapped ::ffff:0:0/96 needs no entry: BlockList judges a mapped address by the IPv4 rules above (an entry
  // here would match every IPv4 address). IPv4-translated ::ffff:0:0:0/96 (SIIT) gets no such treatment:
  ['::ffff:0:0:0', 96],
  ['64:ff9b::', 96], // NAT64 (could embed a private IPv4)
  ['64:ff9b:1::', 48], // local-use NAT64
  ['2001::', 32], // Teredo (embeds an IPv4)
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 (could embed a private IPv4)
  ['fc00::', 7], // unique local, AWS's metadata fd00:ec2::254 included
  ['fe80::', 10], // link-local
  ['fec0::', 10], // old site-local
  ['ff00::', 8], // multicast
] as const) {
  forbidden.addSubnet(network, prefix, 'ipv6');
}

/** Why an address is refused, or undefined when a webhook may connect to it. IPv4-mapped IPv6 counts as IPv4. */
export const addressRefusal = (address: string, allowLoopback: boolean): string | undefined => {
  const family = isIP(address);
  if (family === 0) return 'is not an IP address';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (loopback.check(address, type)) return allowLoopback ? undefined : 'is a loopback address';
  if (forbidden.check(address, type)) return 'is a private, link-local, metadata or reserved address';
  return undefined;
};

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Thrown when a host is refused or does not resolve; the message is safe to show to the webhook's owner. */
export class AddressRefused extends Error {
  override name = 'AddressRefused';
  constructor(
    message: string,
    /** The host did not resolve: maybe a passing DNS failure, not a verdict on an address. */
    readonly unresolved = false,
  ) {
    super(message);
  }
}

/** URL host without IPv6 brackets. */
export const bareHost = (hostname: string): string =>
  hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;

/**
 * Resolves a host once and checks every address it resolves to (one bad address refuses the host: an attacker
 * could otherwise rely on the client's choice). Returns the address to connect to.
 */
export const resolveAllowed = async (hostname: string, allowLoopback: boolean): Promise<ResolvedAddress> => {
  const host = bareHost(hostname);
  const literal = isIP(host);
  let addresses: ResolvedAddress[];
  if (literal !== 0) {
    addresses = [{ address: host, family: literal as 4 | 6 }];
  } else {
    try {
      addresses = (await lookup(host, { all: true, verbatim: true })).map((entry) => ({
        address: entry.address,
        family: entry.family as 4 | 6,
      }));
    } catch {
      throw new AddressRefused(`host ${host} does not resolve`, true);
    }
  }
  const first = addresses[0];
  if (!first) throw new AddressRefused(`host ${host} does not resolve`, true);
  for (const { address } of addresses) {
    const refusal = addressRefusal(address, allowLoopback);
    if (refusal) {
      throw new AddressRefused(
        literal !== 0 ? `${address} ${refusal}` : `host ${host} resolves to ${address}, which ${refusal}`,
      );
    }
  }
  return first;
};
