import { embeddable } from './framing.js';

/**
 * Cookies of the login UI (RFC 6265bis): HttpOnly, SameSite=Lax, Path=/, and `Secure` with the
 * `__Host-` prefix when the issuer is https (the prefix makes the browser refuse the cookie from a
 * subdomain or over http). When the security policy allows iframe embedding, a secure cookie is
 * SameSite=None so it reaches Sesame inside another site's frame (as ZITADEL does); without https,
 * SameSite=None would be refused by browsers, so it stays Lax.
 */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  if (!header) return cookies;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (!cookies.has(name)) cookies.set(name, value);
  }
  return cookies;
}

export interface CookiePolicy {
  name: string;
  secure: boolean;
}

export function agentCookiePolicy(issuer: string): CookiePolicy {
  const secure = issuer.startsWith('https:');
  return { name: secure ? '__Host-sesame.useragent' : 'sesame.useragent', secure };
}

const ONE_YEAR_SECONDS = 365 * 24 * 3600;

export function setCookieHeader(policy: CookiePolicy, value: string, maxAgeSeconds = ONE_YEAR_SECONDS): string {
  const sameSite = policy.secure && embeddable() ? 'None' : 'Lax';
  return `${policy.name}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=${sameSite}${policy.secure ? '; Secure' : ''}`;
}
