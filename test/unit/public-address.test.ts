import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPublicAddress, publicOnlyLookup } from '../../src/util/public-address.js';
import { sendLogoutToken } from '../../src/services/backchannel-logout/logout-sender.js';

/**
 * Back-channel logout receivers that no instance role vouches for may only be public hosts: which addresses
 * count as internal, the resolver guard, and the sender refusing an internal receiver that a plain
 * delivery reaches.
 */
let receiver: Server;
let port: number;
let received = 0;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    received++;
    req.resume();
    req.on('end', () => res.writeHead(200).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  port = (receiver.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

describe('public addresses', () => {
  it('tells internal addresses from public ones', () => {
    for (const internal of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
      '::10.0.0.1',
      '64:ff9b:1::a00:1',
      'fec0::1',
      '2002:0a00:0001::1',
      '192.0.2.1',
      '203.0.113.9',
    ]) {
      expect(isPublicAddress(internal), internal).toBe(false);
    }
    for (const open of ['1.1.1.1', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(isPublicAddress(open), open).toBe(true);
    expect(isPublicAddress('not-an-address')).toBe(false);
  });

  it('judges an IPv4-mapped address (::ffff:0:0/96) by the IPv4 address it carries, however it is written', () => {
    for (const internal of ['::ffff:10.0.0.1', '0:0:0:0:0:ffff:0a00:0001', '::FFFF:A9FE:A9FE', '::ffff:0:0', '::ffff:100.64.0.1', '::ffff:192.168.0.1']) {
      expect(isPublicAddress(internal), internal).toBe(false);
    }
    for (const open of ['::ffff:8.8.8.8', '0:0:0:0:0:ffff:0101:0101', '::ffff:172.32.0.1']) expect(isPublicAddress(open), open).toBe(true);
  });

  it('the discard-only, IETF protocol assignment, documentation and SRv6 blocks are not public', () => {
    // 100::/64 and 100:0:0:1::/64 discard-only; 2001::/23 IETF protocol assignments (Teredo 2001::/32,
    // benchmarking 2001:2::/48, ORCHIDv2 2001:20::/28); 3fff::/20 documentation; 5f00::/16 SRv6 SIDs.
    for (const internal of [
      '100::1',
      '100::ffff:ffff:ffff:ffff',
      '100:0:0:1::1',
      '2001::1',
      '2001:0:4136:e378:8000:63bf:3fff:fdd2',
      '2001:2::1',
      '2001:20::1',
      '2001:1ff::1',
      '3fff::1',
      '3fff:fff::1',
      '5f00::1',
    ]) {
      expect(isPublicAddress(internal), internal).toBe(false);
    }
    // Just outside them: public.
    for (const open of ['100:0:0:2::1', '2001:200::1', '2001:4860:4860::8888', '3fff:1000::1', '4000::1', '5f01::1']) expect(isPublicAddress(open), open).toBe(true);
  });

  it('the resolver guard refuses a name that resolves to an internal address', async () => {
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) => publicOnlyLookup('localhost', {}, (e) => resolve(e)));
    expect(error?.code).toBe('ENOTPUBLIC');
    expect(error?.message).toMatch(/not a public address/);
  });

  it('the sender delivers to an internal receiver only when it need not be public', async () => {
    const before = received;
    expect(await sendLogoutToken(`http://127.0.0.1:${port}/logout`, 'token', { timeoutMs: 5000 })).toEqual({ delivered: true });
    expect(received).toBe(before + 1);
    for (const uri of [`http://127.0.0.1:${port}/logout`, `http://localhost:${port}/logout`, `http://[::1]:${port}/logout`]) {
      const outcome = await sendLogoutToken(uri, 'token', { timeoutMs: 5000, publicOnly: true });
      expect(outcome.delivered, uri).toBe(false);
      expect(outcome.delivered ? '' : outcome.reason, uri).toMatch(/not a public address/);
    }
    expect(received).toBe(before + 1);
  });
});
