import { describe, expect, it } from 'vitest';
import { clientAddress, trustedProxies } from '../../src/util/client-address.js';

/** SESAME_TRUSTED_PROXIES: which address a limit per address counts, behind reverse proxies. */
describe('client address', () => {
  const proxies = trustedProxies(['10.0.0.0/8', '::1', '2001:db8::/32'])!;

  it('is the peer of the connection without trusted proxies, or when the peer is not one', () => {
    expect(clientAddress('203.0.113.7', '198.51.100.1', undefined)).toBe('203.0.113.7');
    expect(clientAddress('203.0.113.7', '198.51.100.1', proxies)).toBe('203.0.113.7');
    expect(clientAddress('10.1.2.3', undefined, proxies)).toBe('10.1.2.3');
  });

  it('is the right-most X-Forwarded-For hop that is not a trusted proxy', () => {
    expect(clientAddress('10.1.2.3', '198.51.100.1', proxies)).toBe('198.51.100.1');
    // What the client wrote itself (left) proves nothing.
    expect(clientAddress('10.1.2.3', '1.2.3.4, 198.51.100.1, 10.9.9.9', proxies)).toBe('198.51.100.1');
    expect(clientAddress('0000:0000:0000:0000:0000:0000:0000:0001', '2001:db8::5, 2a00:1450::1', proxies)).toBe('2a00:1450::1');
    // uWS hands IPv4 peers as mapped IPv6.
    expect(clientAddress('0000:0000:0000:0000:0000:ffff:0a01:0203', '198.51.100.1', proxies)).toBe('198.51.100.1');
  });

  it('reads hops written with a port, as some proxies write them', () => {
    expect(clientAddress('10.1.2.3', '198.51.100.1:5678', proxies)).toBe('198.51.100.1');
    expect(clientAddress('10.1.2.3', '[2a00:1450::1]:443, 10.0.0.2', proxies)).toBe('2a00:1450::1');
    expect(clientAddress('10.1.2.3', '[2a00:1450::1]', proxies)).toBe('2a00:1450::1');
  });

  it('stops at garbage and at an all-proxy chain', () => {
    expect(clientAddress('10.1.2.3', 'not-an-ip', proxies)).toBe('10.1.2.3');
    expect(clientAddress('10.1.2.3', '198.51.100.1, junk, 10.0.0.2', proxies)).toBe('10.0.0.2');
    expect(clientAddress('10.1.2.3', '10.0.0.5, 10.0.0.2', proxies)).toBe('10.0.0.5');
  });

  it('refuses entries that are not addresses or CIDR ranges', () => {
    for (const bad of ['example.com', '10.0.0.0/33', '10.0.0.0/8/1', '::1/129', '10.0.0.0/x']) {
      expect(() => trustedProxies([bad]), bad).toThrow();
    }
    expect(trustedProxies([])).toBeUndefined();
  });
});
