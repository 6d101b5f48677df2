import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { MasterKey } from '../../crypto/master-key.js';
import { clock } from '../../util/clock.js';
import { parseCookies, type CookiePolicy } from '../cookies.js';

/**
 * The console's state in the browser, sealed with the master key (AES-256-GCM): no thread or node
 * keeps it, so every one serves every console page. A signed-in session holds the tokens the
 * console's code exchange returned (never readable by the browser: sealed, HttpOnly); a sign-in
 * under way holds its state, nonce and PKCE verifier. Each names its purpose, so nothing else the
 * master key sealed passes for it. Forms carry a CSRF token bound to the session's random id.
 */
export interface ConsoleSession {
  purpose: 'console-session';
  /** Random, per sign-in: what the CSRF tokens are bound to. */
  sid: string;
  accessToken: string;
  /** The ID token, the logout's hint; '' when the cookie would have grown past what browsers keep (see sealedSession). */
  idToken: string;
  /** The login session the console's sign-in is part of (the ID token's `sid`): "this browser" on the account page. */
  loginSession: string;
  /** The org the console works in (`x-zitadel-orgid` of its API calls). */
  orgId: string;
  /** When the access token expires (ms): the session ends with it. */
  until: number;
}

export interface ConsoleSignIn {
  purpose: 'console-sign-in';
  state: string;
  nonce: string;
  verifier: string;
  /** The console page to go back to (a path under /ui/console). */
  returnTo: string;
  until: number;
}

/** How long a sign-in may take, from the console's redirect to the login until the callback. */
export const SIGN_IN_MS = 30 * 60_000;

export function consoleCookies(issuer: string): { session: CookiePolicy; signIn: CookiePolicy } {
  const secure = issuer.startsWith('https:');
  const prefix = secure ? '__Host-' : '';
  return { session: { name: `${prefix}sesame.console`, secure }, signIn: { name: `${prefix}sesame.console.signin`, secure } };
}

export function sealed(masterKey: MasterKey, value: ConsoleSession | ConsoleSignIn): string {
  return masterKey.encrypt(Buffer.from(JSON.stringify(value), 'utf8')).toString('base64url');
}

/** Browsers drop a cookie over 4096 bytes (name and attributes included): past this the session keeps no ID token. */
const MOST_COOKIE_VALUE = 3800;

/**
 * The session's cookie value. A large ID token (many claims) would make the cookie one the browser
 * silently drops, and every page would send it back to sign in again: it is left out then, and the
 * sign-out ends the login session without the hint (on Sesame's own signed-out page).
 */
export function sealedSession(masterKey: MasterKey, session: ConsoleSession): string {
  const value = sealed(masterKey, session);
  return value.length <= MOST_COOKIE_VALUE ? value : sealed(masterKey, { ...session, idToken: '' });
}

function opened(masterKey: MasterKey, text: string | undefined): Record<string, unknown> | undefined {
  if (!text || text.length > 8192) return undefined;
  try {
    const value: unknown = JSON.parse(masterKey.decrypt(Buffer.from(text, 'base64url')).toString('utf8'));
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const strings = (value: Record<string, unknown>, names: readonly string[]) => names.every((n) => typeof value[n] === 'string');

/** The browser's console session, if it holds one that has not expired. */
export function sessionOf(masterKey: MasterKey, policy: CookiePolicy, cookieHeader: string | undefined): ConsoleSession | undefined {
  const value = opened(masterKey, parseCookies(cookieHeader).get(policy.name));
  if (value?.purpose !== 'console-session' || !strings(value, ['sid', 'accessToken', 'idToken', 'loginSession', 'orgId']) || typeof value.until !== 'number') return undefined;
  return value.until > clock.now() ? (value as unknown as ConsoleSession) : undefined;
}

/** The sign-in under way in this browser, if any and not expired. */
export function signInOf(masterKey: MasterKey, policy: CookiePolicy, cookieHeader: string | undefined): ConsoleSignIn | undefined {
  const value = opened(masterKey, parseCookies(cookieHeader).get(policy.name));
  if (value?.purpose !== 'console-sign-in' || !strings(value, ['state', 'nonce', 'verifier', 'returnTo']) || typeof value.until !== 'number') return undefined;
  return value.until > clock.now() ? (value as unknown as ConsoleSignIn) : undefined;
}

/** Always SameSite=Lax, whatever the login's embedding policy: the console is never framed, and no other site's form carries its session. */
function cookieHeader(policy: CookiePolicy, value: string, maxAgeSeconds: number): string {
  return `${policy.name}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${policy.secure ? '; Secure' : ''}`;
}

export function setConsoleCookie(policy: CookiePolicy, value: string, untilMs: number): string {
  return cookieHeader(policy, value, Math.max(1, Math.ceil((untilMs - clock.now()) / 1000)));
}

export function clearConsoleCookie(policy: CookiePolicy): string {
  return cookieHeader(policy, '', 0);
}

export function randomToken(): string {
  return randomBytes(24).toString('base64url');
}

/** The CSRF token of a session's forms: an HMAC of its id with a key for this purpose only. */
export function consoleCsrf(key: Buffer, session: ConsoleSession): string {
  return createHmac('sha256', key).update(`console|${session.sid}`).digest('base64url');
}

export function consoleCsrfValid(key: Buffer, session: ConsoleSession, presented: string | undefined): boolean {
  if (!presented) return false;
  const expected = Buffer.from(consoleCsrf(key, session));
  const given = Buffer.from(presented);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
