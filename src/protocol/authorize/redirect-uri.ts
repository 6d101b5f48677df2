import type { OidcAppConfig } from '../../model/records.js';
import type { View } from '../../util/readonly.js';

/**
 * Redirect URI matching (seed: "must equal exactly one of the registered redirect URIs"). Apps in
 * dev mode may register glob patterns (ZITADEL compat §2.3): `*` within a path segment, `**` across.
 */
function globToRegExp(pattern: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        out += '.*';
        i++;
      } else {
        out += '[^/]*';
      }
    } else {
      out += c.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
    }
  }
  return new RegExp(`^${out}$`);
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** An http loopback URI with its port removed, else undefined. */
function loopbackWithoutPort(uri: string): string | undefined {
  if (!URL.canParse(uri)) return undefined;
  const url = new URL(uri);
  if (url.protocol !== 'http:' || !LOOPBACK.has(url.hostname)) return undefined;
  url.port = '';
  return url.href;
}

/**
 * `native`: a native app's loopback redirect matches on any port (RFC 8252 §7.3, ZITADEL compat
 * §2.3), since the app listens on whatever port it gets from the OS.
 */
export function matchesRegistered(uri: string, registered: readonly string[], devMode: boolean, native = false): boolean {
  if (registered.includes(uri)) return true;
  if (native) {
    const bare = loopbackWithoutPort(uri);
    if (bare !== undefined && registered.some((r) => loopbackWithoutPort(r) === bare)) return true;
  }
  if (!devMode) return false;
  // A glob can match text that is no URL (`http://localhost:99999/cb`); such a target is refused.
  return registered.some((pattern) => pattern.includes('*') && globToRegExp(pattern).test(uri)) && URL.canParse(uri);
}

export function redirectUriAllowed(config: View<OidcAppConfig>, uri: string): boolean {
  return matchesRegistered(uri, config.redirectUris, config.devMode, config.appType === 'OIDC_APP_TYPE_NATIVE');
}

export function postLogoutUriAllowed(config: View<OidcAppConfig>, uri: string): boolean {
  return matchesRegistered(uri, config.postLogoutRedirectUris, config.devMode, config.appType === 'OIDC_APP_TYPE_NATIVE');
}
