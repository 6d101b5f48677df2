import type { OidcAppConfig } from '../../model/records.js';

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

export function matchesRegistered(uri: string, registered: readonly string[], devMode: boolean): boolean {
  if (registered.includes(uri)) return true;
  if (!devMode) return false;
  // A glob can match text that is no URL (`http://localhost:99999/cb`); such a target is refused.
  return registered.some((pattern) => pattern.includes('*') && globToRegExp(pattern).test(uri)) && URL.canParse(uri);
}

export function redirectUriAllowed(config: OidcAppConfig, uri: string): boolean {
  return matchesRegistered(uri, config.redirectUris, config.devMode);
}

export function postLogoutUriAllowed(config: OidcAppConfig, uri: string): boolean {
  return matchesRegistered(uri, config.postLogoutRedirectUris, config.devMode);
}
