import { isIPv4, isIPv6 } from 'node:net';

/**
 * The key a per-address limit counts under: an IPv4 address as it is (IPv4-mapped IPv6 too), an
 * IPv6 address by its /64, since one subscriber commonly holds a whole /64 and would otherwise get
 * a fresh allowance per address.
 */
export function addressLimitKey(address: string): string {
  // A zone id (`fe80::1%eth0`) names an interface, not another address: not part of the key.
  const text = address.trim().toLowerCase().replace(/%.*$/, '');
  if (isIPv4(text)) return text;
  if (!isIPv6(text)) return text;
  const groups = expandIPv6(text);
  // ::ffff:a.b.c.d (or its hex form): the IPv4 address.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The 8 groups of a valid IPv6 address (with `::` and a dotted IPv4 tail expanded). */
function expandIPv6(text: string): number[] {
  let body = text;
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(body);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    tail.push((a << 8) | b, (c << 8) | d);
    body = body.slice(0, -dotted[1]!.length).replace(/:$/, body.endsWith(`::${dotted[1]}`) ? ':' : '');
  }
  const [head, rest] = body.split('::') as [string, string | undefined];
  const parse = (part: string | undefined) =>
    part
      ? part
          .split(':')
          .filter((g) => g !== '')
          .map((g) => Number.parseInt(g, 16))
      : [];
  const left = parse(head);
  const right = [...parse(rest), ...tail];
  const fill = rest === undefined ? [] : new Array<number>(Math.max(0, 8 - left.length - right.length)).fill(0);
  return [...left, ...fill, ...right];
}
