import { BlockList, isIP } from 'node:net';

/**
 * The address of the client a request came from, for limits per address (wrong device codes,
 * registrations). Behind a reverse proxy every connection comes from the proxy; when the
 * connection's peer is a trusted proxy (`SESAME_TRUSTED_PROXIES`), the client is the right-most
 * `X-Forwarded-For` entry that is not itself a trusted proxy: entries left of it were written by
 * the client and prove nothing. Uses node's BlockList for address and CIDR matching.
 */
export interface TrustedProxies {
  has(address: string): boolean;
}

/** The trusted proxies of a list of addresses and CIDR ranges (`10.0.0.0/8`, `::1`); throws on a bad entry. */
export function trustedProxies(entries: readonly string[]): TrustedProxies | undefined {
  if (entries.length === 0) return undefined;
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefix, extra] = entry.split('/');
    const family = isIP(address ?? '');
    if (family === 0 || extra !== undefined) throw new Error(`"${entry}" is not an IP address or CIDR range`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) {
      list.addAddress(address!, type);
      continue;
    }
    const bits = Number(prefix);
    if (!/^\d+$/.test(prefix) || bits > (family === 4 ? 32 : 128)) throw new Error(`"${entry}" has an invalid prefix length`);
    list.addSubnet(address!, bits, type);
  }
  return {
    has: (candidate) => {
      const family = isIP(candidate);
      return family !== 0 && list.check(candidate, family === 4 ? 'ipv4' : 'ipv6');
    },
  };
}

/** uWS gives IPv6 in full (`0000:…:0001`) and IPv4 clients as mapped IPv6; both are read as addresses as they are. */
export function clientAddress(peer: string, forwardedFor: string | undefined, trusted: TrustedProxies | undefined): string {
  if (!trusted || forwardedFor === undefined || !trusted.has(peer)) return peer;
  const hops = forwardedFor.split(',').map(hopAddress);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    // Garbage in the header ends the walk: the last good hop is the best the proxies vouch for.
    if (isIP(hop) === 0) return i === hops.length - 1 ? peer : hops[i + 1]!;
    if (!trusted.has(hop)) return hop;
  }
  // Every hop is a trusted proxy: the left-most is where the chain starts.
  return hops[0]!;
}

/** A hop as some proxies write it, with a port (`1.2.3.4:5678`, `[2001:db8::1]:443`): the address alone. */
function hopAddress(text: string): string {
  const hop = text.trim();
  if (hop.startsWith('[')) {
    const end = hop.indexOf(']');
    return end > 0 ? hop.slice(1, end) : hop;
  }
  const colon = hop.indexOf(':');
  return colon > 0 && colon === hop.lastIndexOf(':') && isIP(hop.slice(0, colon)) === 4 ? hop.slice(0, colon) : hop;
}
