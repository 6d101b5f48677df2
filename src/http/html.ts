import { createHash } from 'node:crypto';
import { FORM_POST_SCRIPT } from '../ui/pages.js';
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

let pageHeaders: Record<string, string> = {};
let formPostHeaders: Record<string, string> = {};
onFramingPolicy(() => {
  // X-Frame-Options cannot name several origins: only sent when nobody may frame the pages.
  const framing = { ...(embeddable() ? {} : { 'X-Frame-Options': 'DENY' }) };
  pageHeaders = { ...BASE, ...framing, 'Content-Security-Policy': `${PAGE_CSP}; frame-ancestors ${frameAncestors()}` };
  formPostHeaders = { ...BASE, ...framing, 'Content-Security-Policy': `${FORM_POST_CSP}; frame-ancestors ${frameAncestors()}` };
});

export function htmlResponse(status: number, body: string, headers: Record<string, string> = {}): Response {
  return { status, headers: { ...pageHeaders, ...headers }, body };
}

export function formPostResponse(body: string, headers: Record<string, string> = {}): Response {
  return { status: 200, headers: { ...formPostHeaders, ...headers }, body };
}

export function redirectResponse(location: string, headers: Record<string, string> = {}, status = 302): Response {
  return { status, headers: { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', Location: location, ...headers }, body: '' };
}
