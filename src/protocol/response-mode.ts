import type { ResponseMode, ResponseType } from '../model/authorization.js';

export type { ResponseMode, ResponseType };

function defaultResponseMode(responseType: ResponseType | undefined): ResponseMode {
  return responseType === undefined || responseType === 'code' ? 'query' : 'fragment';
}

/**
 * The requested mode if it is valid for the response type, else the default: invalid values are
 * ignored (docs/compatibility.md §6.2), and `query` is never used for responses carrying tokens (they would leak into
 * logs and Referer headers).
 */
export function chooseResponseMode(requested: string | undefined, responseType: ResponseType | undefined): ResponseMode {
  const fallback = defaultResponseMode(responseType);
  if (requested === 'fragment' || requested === 'form_post') return requested;
  if (requested === 'query' && fallback === 'query') return 'query';
  return fallback;
}

/**
 * How an authorization response reaches the client (OAuth 2.0 Multiple Response Type Encoding
 * Practices, Form Post Response Mode). Pure data: the caller renders a form_post page.
 */
export type Delivery = { kind: 'redirect'; location: string } | { kind: 'form_post'; action: string; params: [string, string][] };

/** Parameters to the redirect_uri; undefined values are left out. */
export function deliver(redirectUri: string, mode: ResponseMode, params: Record<string, string | undefined>): Delivery {
  const entries = Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined);
  if (mode === 'form_post') return { kind: 'form_post', action: redirectUri, params: entries };
  const encoded = new URLSearchParams(entries).toString();
  if (mode === 'fragment') {
    const base = redirectUri.split('#')[0]!;
    return { kind: 'redirect', location: `${base}#${encoded}` };
  }
  const url = new URL(redirectUri);
  for (const [k, v] of entries) url.searchParams.append(k, v);
  return { kind: 'redirect', location: url.toString() };
}
