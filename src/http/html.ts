import { createHash } from 'node:crypto';
import { FORM_POST_SCRIPT } from '../ui/pages.js';
import type { Response } from './types.js';

/**
 * HTML responses of the browser endpoints: never cached, never framed (clickjacking), no
 * scripts except the form_post page's one inline script, allowed by its hash.
 */
const BASE = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  Pragma: 'no-cache',
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  Vary: 'Cookie',
};
const PAGE_CSP = "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'";
const FORM_POST_CSP = `default-src 'none'; style-src 'self'; script-src 'sha256-${createHash('sha256').update(FORM_POST_SCRIPT).digest('base64')}'; base-uri 'none'; frame-ancestors 'none'`;

export function htmlResponse(status: number, body: string, headers: Record<string, string> = {}): Response {
  return { status, headers: { ...BASE, 'Content-Security-Policy': PAGE_CSP, ...headers }, body };
}

export function formPostResponse(body: string, headers: Record<string, string> = {}): Response {
  return { status: 200, headers: { ...BASE, 'Content-Security-Policy': FORM_POST_CSP, ...headers }, body };
}

export function redirectResponse(location: string, headers: Record<string, string> = {}, status = 302): Response {
  return { status, headers: { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer', Location: location, ...headers }, body: '' };
}
