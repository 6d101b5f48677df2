import type { OidcAppConfig } from '../../model/records.js';
import type { View } from '../../util/readonly.js';

/**
 * Redirect URI matching: a URI must equal one of the registered redirect URIs
 * (docs/compatibility.md §2.3, §6.1). Apps in dev mode may register glob patterns: `*` within a
 * path segment, `**` across.
 *
 * Whether `text` matches the glob. Hand-written instead of a RegExp: a pattern such as `**a**a**a`
 * makes a backtracking regex take polynomial time in the length of the (attacker-chosen)
 * redirect_uri; this table walk costs pattern length × text length, whatever the input.
 */
export function globMatches(pattern: string, text: string): boolean {
  const n = text.length;
  // reach[j]: the pattern read so far matches text[0, j).
  let reach = new Uint8Array(n + 1);
  reach[0] = 1;
  for (let i = 0; i < pattern.length; i++) {
    const next = new Uint8Array(n + 1);
    if (pattern[i] === '*') {
      const anyChar = pattern[i + 1] === '*';
      if (anyChar) i++;
      // Zero or more characters; `*` stops at a `/` (one path segment), `**` does not.
      let open = 0;
      for (let j = 0; j <= n; j++) {
        if (reach[j]) open = 1;
        if (open) next[j] = 1;
        if (j < n && !anyChar && text.charCodeAt(j) === 0x2f) open = 0;
      }
    } else {
      const c = pattern.charCodeAt(i);
      for (let j = 0; j < n; j++) if (reach[j] && text.charCodeAt(j) === c) next[j + 1] = 1;
    }
    reach = next;
  }
  return reach[n] === 1;
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Whether a host (as a URL's `hostname` writes it) is this machine's loopback. */
export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK.has(hostname);
}

/** Whether a URI is http on a loopback host (RFC 8252 §7.3: a native app's redirect; local pages). */
export function isLoopbackHttp(uri: string): boolean {
  if (!URL.canParse(uri)) return false;
  const url = new URL(uri);
  return url.protocol === 'http:' && LOOPBACK.has(url.hostname);
}

/** An http loopback URI with its port removed, else undefined. */
function loopbackWithoutPort(uri: string): string | undefined {
  if (!isLoopbackHttp(uri)) return undefined;
  const url = new URL(uri);
  url.port = '';
  return url.href;
}

/**
 * `native`: a native app's loopback redirect matches on any port (RFC 8252 §7.3,
 * docs/compatibility.md §2.3), since the app listens on whatever port it gets from the OS.
 */
export function matchesRegistered(uri: string, registered: readonly string[], devMode: boolean, native = false): boolean {
  if (registered.includes(uri)) return true;
  if (native) {
    const bare = loopbackWithoutPort(uri);
    if (bare !== undefined && registered.some((r) => loopbackWithoutPort(r) === bare)) return true;
  }
  if (!devMode) return false;
  // A glob can match text that is no URL (`http://localhost:99999/cb`); such a target is refused.
  return registered.some((pattern) => pattern.includes('*') && globMatches(pattern, uri)) && URL.canParse(uri);
}

export function redirectUriAllowed(config: View<OidcAppConfig>, uri: string): boolean {
  return matchesRegistered(uri, config.redirectUris, config.devMode, config.appType === 'OIDC_APP_TYPE_NATIVE');
}

export function postLogoutUriAllowed(config: View<OidcAppConfig>, uri: string): boolean {
  return matchesRegistered(uri, config.postLogoutRedirectUris, config.devMode, config.appType === 'OIDC_APP_TYPE_NATIVE');
}
