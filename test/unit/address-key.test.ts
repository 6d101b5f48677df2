import { describe, expect, it } from 'vitest';
import { addressLimitKey } from '../../src/util/address-key.js';

describe('addressLimitKey', () => {
  it('keeps IPv4, unwraps IPv4-mapped IPv6, and groups IPv6 by /64', () => {
    expect(addressLimitKey('127.0.0.1')).toBe('127.0.0.1');
    expect(addressLimitKey('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(addressLimitKey('0000:0000:0000:0000:0000:ffff:7f00:0001')).toBe('127.0.0.1');
    expect(addressLimitKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressLimitKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(addressLimitKey('::1')).toBe('0:0:0:0::/64');
    expect(addressLimitKey('2001:db8::')).toBe('2001:db8:0:0::/64');
    expect(addressLimitKey('')).toBe('');
  });

  it("drops a zone id, and never throws on what node's isIP lets through", () => {
    expect(addressLimitKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(() => addressLimitKey('1::%1:2:3:4:5:6:7:8')).not.toThrow();
  });
});
