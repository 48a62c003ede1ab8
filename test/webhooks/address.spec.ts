/** The address rule of webhook deliveries (src/webhooks/webhook-http.ts). */
import { isNonPublicAddress, resolveAllowed } from '../../src/webhooks/webhook-http';

describe('isNonPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.0.0.1',
    '172.16.5.4',
    '172.31.255.255',
    '192.168.0.10',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fd12:3456::1',
    'fc00::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
    '64:ff9b::10.0.0.1',
    // IPv6 forms that reach IPv4 space (security review): IPv4-compatible, IPv4-translated in hex,
    // 6to4, Teredo, NAT64 (well-known prefix, spelled out; local-use prefix), a zone id.
    '::7f00:1',
    '::127.0.0.1',
    '::a00:1',
    '::8.8.8.8',
    '::ffff:0:7f00:1',
    '::ffff:0:a00:1',
    '::ffff:0:127.0.0.1',
    '0:0:0:0:0:ffff:7f00:1',
    '2002:7f00:1::1',
    '2002:808:808::1',
    '2001::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '64:ff9b::7f00:1',
    '64:ff9b:0:0:0:0:7f00:1',
    '64:ff9b:1::a00:1',
    '64:ff9b:1::808:808',
    'fe80::1%eth0',
    'FE80::1',
    'not-an-address',
  ])('refuses %s', (ip) => expect(isNonPublicAddress(ip)).toBe(true));

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '192.169.0.1', '100.128.0.1', '2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9b::808:808', '2001:db9::1', '2003::1'])('allows %s', (ip) => expect(isNonPublicAddress(ip)).toBe(false));
});

describe('resolveAllowed', () => {
  it('checks literal addresses and every address a name resolves to', async () => {
    await expect(resolveAllowed('127.0.0.1', false)).rejects.toThrow(/resolves to 127\.0\.0\.1/);
    await expect(resolveAllowed('[::1]', false)).rejects.toThrow(/::1/);
    await expect(resolveAllowed('localhost', false)).rejects.toThrow(/loopback, link-local, private or reserved/);
    await expect(resolveAllowed('8.8.8.8', false)).resolves.toEqual([{ address: '8.8.8.8', family: 4 }]);
    await expect(resolveAllowed('127.0.0.1', true)).resolves.toEqual([{ address: '127.0.0.1', family: 4 }]);
    await expect(resolveAllowed('no-such-host.invalid', true)).rejects.toThrow(/does not resolve/);
  });
});
