/**
 * A bound address as it goes in a URL someone can open: a wildcard address as `localhost`, an
 * IPv6 address in brackets.
 */
export function urlHost(host: string): string {
  if (host === '0.0.0.0' || host === '::') return 'localhost';
  return host.includes(':') ? `[${host}]` : host;
}
