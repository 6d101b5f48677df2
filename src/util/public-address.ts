import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Addresses outside the public internet: loopback, private networks, link-local (cloud metadata
 * services live there), shared and unspecified space. An outbound request someone without an
 * instance role may aim (the back-channel logout URI of a client that registered itself, or of an
 * app an org administrator configured) must not reach them: it would be a blind request forgery
 * into the network Sesame runs in.
 */
const NOT_PUBLIC = new BlockList();
// IANA's special-purpose registries: private, shared, loopback, link-local, benchmarking,
// documentation, multicast and reserved space; NAT64 and 6to4 prefixes, which embed an IPv4 address
// that may be private, and the deprecated IPv4-compatible and site-local IPv6 forms; the discard-only
// prefixes (100::/64, 100:0:0:1::/64), the IETF protocol assignments (2001::/23, Teredo among them,
// which embeds an IPv4 address too), and the newer documentation (3fff::/20) and SRv6 SID (5f00::/16)
// blocks. IPv4-mapped addresses (::ffff:0:0/96) are judged by the IPv4 address they carry (below).
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 3],
] as const) {
  NOT_PUBLIC.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['2002::', 16],
  ['2001:db8::', 32],
  ['100::', 64],
  ['100:0:0:1::', 64],
  ['2001::', 23],
  ['3fff::', 20],
  ['5f00::', 16],
] as const) {
  NOT_PUBLIC.addSubnet(net, bits, 'ipv6');
}

/**
 * Whether an IP address is on the public internet. An IPv4-mapped IPv6 address (::ffff:0:0/96) is
 * judged as the IPv4 address it carries, where a connection to it goes: BlockList checks it
 * against the IPv4 rules, however it is written (test/unit/public-address.test.ts pins this).
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return !NOT_PUBLIC.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Whether a URL's host is certainly inside the network: `localhost` (and its subdomains) or an
 * address that is not public. A name is judged when it is resolved (publicOnlyLookup).
 */
export function isInternalHost(hostname: string): boolean {
  const host = hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || (isIP(host) !== 0 && !isPublicAddress(host));
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request that resolves as usual and refuses a name whose address is not
 * public, so a name that points (or is rebound) to an internal address is caught where the
 * connection is made, not only when the URI was registered.
 */
export function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, options, (error, address, family) => {
    if (error) return callback(error, address as string, family);
    const addresses = Array.isArray(address) ? address.map((a) => a.address) : [address];
    const internal = addresses.find((a) => !isPublicAddress(a));
    if (internal !== undefined) {
      return callback(Object.assign(new Error(`${hostname} resolves to ${internal}, which is not a public address`), { code: 'ENOTPUBLIC' }), address as string, family);
    }
    callback(null, address as string, family);
  });
}
