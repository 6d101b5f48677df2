import { createHash } from 'node:crypto';
import { FORM_POST_SCRIPT } from '../ui/pages.js';
import { WEBAUTHN_SCRIPT } from '../ui/webauthn-script.js';
import { embeddable, frameAncestors, onFramingPolicy } from './framing.js';
import type { Response } from './types.js';

/**
 * HTML responses of the browser endpoints: never cached, framed only as the instance security
 * policy allows (src/http/framing.ts; by default never: clickjacking), no scripts except the
 * form_post page's one inline script, allowed by its hash.
 */
const BASE = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  Pragma: 'no-cache',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  Vary: 'Cookie',
};
const PAGE_CSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; font-src 'self'; base-uri 'none'";
const FORM_POST_CSP = `default-src 'none'; style-src 'self'; script-src 'sha256-${createHash('sha256').update(FORM_POST_SCRIPT).digest('base64')}'; base-uri 'none'`;
/** The WebAuthn ceremony's pages: the page's CSP and its one script, by hash (ui/webauthn-script.ts). */
export const WEBAUTHN_SCRIPT_HASH = `sha256-${createHash('sha256').update(WEBAUTHN_SCRIPT).digest('base64')}`;
const CEREMONY_CSP = `${PAGE_CSP}; script-src '${WEBAUTHN_SCRIPT_HASH}'`;

let pageHeaders: Record<string, string> = {};
let formPostHeaders: Record<string, string> = {};
let ceremonyHeaders: Record<string, string> = {};
onFramingPolicy(() => {
  // X-Frame-Options cannot name several origins: only sent when nobody may frame the pages.
  const framing = { ...(embeddable() ? {} : { 'X-Frame-Options': 'DENY' }) };
  pageHeaders = { ...BASE, ...framing, 'Content-Security-Policy': `${PAGE_CSP}; frame-ancestors ${frameAncestors()}` };
  formPostHeaders = { ...BASE, ...framing, 'Content-Security-Policy': `${FORM_POST_CSP}; frame-ancestors ${frameAncestors()}` };
  ceremonyHeaders = { ...BASE, ...framing, 'Content-Security-Policy': `${CEREMONY_CSP}; frame-ancestors ${frameAncestors()}` };
});

/** The admin console's pages: never framed, whatever the login's embedding policy (no clickjacking of administration). */
const CONSOLE_HEADERS = { ...BASE, 'X-Frame-Options': 'DENY', 'Content-Security-Policy': `${PAGE_CSP}; frame-ancestors 'none'` };

/** A console page with the WebAuthn ceremony (a security key added on the account page): its one script allowed by its hash. */
export const CONSOLE_CEREMONY_CSP = `${CEREMONY_CSP}; frame-ancestors 'none'`;

export function consoleHtmlResponse(status: number, body: string, headers: Record<string, string> = {}): Response {
  return { status, headers: { ...CONSOLE_HEADERS, ...headers }, body };
}

export function htmlResponse(status: number, body: string, headers: Record<string, string> = {}): Response {
  return { status, headers: { ...pageHeaders, ...headers }, body };
}

/** A page with the WebAuthn ceremony: its one script allowed by hash. */
export function ceremonyResponse(status: number, body: string, headers: Record<string, string> = {}): Response {
  return { status, headers: { ...ceremonyHeaders, ...headers }, body };
}

export function formPostResponse(body: string, headers: Record<string, string> = {}): Response {
  return { status: 200, headers: { ...formPostHeaders, ...headers }, body };
}

export function redirectResponse(location: string, headers: Record<string, string> = {}, status = 302): Response {
  return { status, headers: { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', Location: location, ...headers }, body: '' };
}
