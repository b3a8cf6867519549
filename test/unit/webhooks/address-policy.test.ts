import { describe, expect, it } from 'vitest';
import {
  AddressRefused,
  addressRefusal,
  bareHost,
  resolveAllowed,
} from '../../../lambdas/domain/webhooks/address-policy';
import { checkWebhookUrl } from '../../../lambdas/domain/webhooks/url-policy';

const BLOCKED = 'is a private, link-local, metadata or reserved address';
const LOOPBACK = 'is a loopback address';

/**
 * Every range the SSRF guard blocks, by name: its first and last address are refused with the reason the
 * webhook's owner sees, whether or not loopback is allowed (local mode lets loopback through, nothing else).
 */
describe.each([
  ['0.0.0.0/8 "this network"', '0.0.0.0', '0.255.255.255'],
  ['10.0.0.0/8 private', '10.0.0.0', '10.255.255.255'],
  ['100.64.0.0/10 carrier-grade NAT', '100.64.0.0', '100.127.255.255'],
  ['169.254.0.0/16 link-local and instance metadata', '169.254.0.0', '169.254.255.255'],
  ['172.16.0.0/12 private', '172.16.0.0', '172.31.255.255'],
  ['192.0.0.0/24 IETF protocol assignments', '192.0.0.0', '192.0.0.255'],
  ['192.0.2.0/24 documentation (TEST-NET-1)', '192.0.2.0', '192.0.2.255'],
  ['192.168.0.0/16 private', '192.168.0.0', '192.168.255.255'],
  ['198.18.0.0/15 benchmarking', '198.18.0.0', '198.19.255.255'],
  ['198.51.100.0/24 documentation (TEST-NET-2)', '198.51.100.0', '198.51.100.255'],
  ['203.0.113.0/24 documentation (TEST-NET-3)', '203.0.113.0', '203.0.113.255'],
  ['224.0.0.0/4 multicast', '224.0.0.0', '239.255.255.255'],
  ['240.0.0.0/4 reserved and broadcast', '240.0.0.0', '255.255.255.255'],
  ['::/96 unspecified and IPv4-compatible', '::', '::ffff:ffff'],
  ['::ffff:0:0:0/96 IPv4-translated', '::ffff:0:0:0', '::ffff:0:ffff:ffff'],
  ['64:ff9b::/96 NAT64', '64:ff9b::', '64:ff9b::ffff:ffff'],
  ['64:ff9b:1::/48 local-use NAT64', '64:ff9b:1::', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff'],
  ['2001::/32 Teredo', '2001::', '2001:0:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['100::/64 discard', '100::', '100::ffff:ffff:ffff:ffff'],
  ['2001:db8::/32 documentation', '2001:db8::', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['2002::/16 6to4', '2002::', '2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['fc00::/7 unique local (AWS metadata fd00:ec2::254)', 'fc00::', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['fe80::/10 link-local', 'fe80::', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['fec0::/10 old site-local', 'fec0::', 'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  ['ff00::/8 multicast', 'ff00::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
])('the SSRF guard blocks %s', (_range, first, last) => {
  it.each([first, last])('refuses %s', (address) => {
    expect(addressRefusal(address, false)).toBe(BLOCKED);
    expect(addressRefusal(address, true)).toBe(BLOCKED);
  });
});

describe('the SSRF guard and loopback', () => {
  it.each([
    ['127.0.0.0/8, first', '127.0.0.0'],
    ['127.0.0.0/8, last', '127.255.255.255'],
    ['::1', '::1'],
    ['IPv4-mapped ::ffff:127.0.0.1', '::ffff:127.0.0.1'],
  ])('refuses %s as loopback unless loopback is allowed', (_what, address) => {
    expect(addressRefusal(address, false)).toBe(LOOPBACK);
    expect(addressRefusal(address, true)).toBeUndefined();
  });

  it('judges an IPv4-mapped IPv6 address by the IPv4 rules', () => {
    expect(addressRefusal('::ffff:192.0.2.1', false)).toBe(BLOCKED);
    expect(addressRefusal('::ffff:8.8.8.8', false)).toBeUndefined();
  });
});

describe('the SSRF guard allows public addresses', () => {
  // The neighbours just outside the IPv4 ranges, so a range cannot silently grow either.
  it.each([
    '1.0.0.0',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '126.255.255.255',
    '128.0.0.0',
    '169.253.255.255',
    '169.255.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '191.255.255.255',
    '192.0.1.0',
    '192.0.3.0',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '198.51.99.255',
    '198.51.101.0',
    '203.0.112.255',
    '203.0.114.0',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2a00:1450:4001::1',
  ])('allows %s', (address) => {
    expect(addressRefusal(address, false)).toBeUndefined();
  });

  it('refuses what is not an IP address', () => {
    expect(addressRefusal('example.com', false)).toBe('is not an IP address');
    expect(addressRefusal('', true)).toBe('is not an IP address');
  });
});

describe('resolving a webhook host', () => {
  it('returns an allowed literal as the address to connect to, IPv6 without brackets', async () => {
    await expect(resolveAllowed('93.184.216.34', false)).resolves.toEqual({
      address: '93.184.216.34',
      family: 4,
    });
    await expect(resolveAllowed('[2606:4700:4700::1111]', false)).resolves.toEqual({
      address: '2606:4700:4700::1111',
      family: 6,
    });
  });

  it('names the refused literal and the reason', async () => {
    await expect(resolveAllowed('[fe80::1]', false)).rejects.toThrow(
      new AddressRefused(`fe80::1 ${BLOCKED}`),
    );
    await expect(resolveAllowed('169.254.169.254', true)).rejects.toThrow(
      new AddressRefused(`169.254.169.254 ${BLOCKED}`),
    );
  });

  it('names the host, the address it resolves to and the reason', async () => {
    await expect(resolveAllowed('localhost', false)).rejects.toThrow(
      /^host localhost resolves to (127\.0\.0\.1|::1), which is a loopback address$/,
    );
    const allowed = await resolveAllowed('localhost', true);
    expect(['127.0.0.1', '::1']).toContain(allowed.address);
    expect(allowed.family).toBe(allowed.address === '::1' ? 6 : 4);
  });

  it('refuses a host that does not resolve', async () => {
    const refused = resolveAllowed('nowhere.invalid', true);
    await expect(refused).rejects.toBeInstanceOf(AddressRefused);
    await expect(refused).rejects.toThrow('host nowhere.invalid does not resolve');
  });

  it('strips the brackets of an IPv6 URL host only', () => {
    expect(bareHost('[::1]')).toBe('::1');
    expect(bareHost('example.com')).toBe('example.com');
    expect(bareHost('[::1')).toBe('[::1');
    expect(bareHost('::1]')).toBe('::1]');
  });

  it('refuses a webhook URL with the reason as the owner sees it', async () => {
    await expect(checkWebhookUrl('https://198.51.100.7/hook', false)).rejects.toThrow(
      new AddressRefused(`198.51.100.7 ${BLOCKED}`),
    );
    await expect(checkWebhookUrl('https://[2001:db8::1]/hook', false)).rejects.toThrow(
      new AddressRefused(`2001:db8::1 ${BLOCKED}`),
    );
  });
});
