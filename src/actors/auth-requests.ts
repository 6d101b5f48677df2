import { randomBytes } from 'node:crypto';
import type { Locale, ValidatedAuthRequest } from '../model/authorization.js';
import type { AuthChecks } from '../model/auth-checks.js';
import { clock } from '../util/clock.js';

/**
 * Owns authorization requests while the user signs in: the validated request, the user agent it
 * is bound to, and how far the login got. They live in memory for at most 30 minutes: a restart
 * sends a user who was mid-login back to the client's start page, which is harmless.
 */
export type LoginStep = 'select' | 'loginname' | 'password' | 'password-change' | 'otp' | 'mfa-setup' | 'register';

export interface AuthRequest {
  id: string;
  /** Hash of the user-agent cookie the request is bound to. */
  agentId: string;
  createdAt: number;
  request: ValidatedAuthRequest;
  locale: Locale;
  step: LoginStep;
  /** The user chosen by login name, account selection or a hint. */
  userId?: string;
  loginName?: string;
  /** The checks passed during this request (or still valid from the browser session). */
  checks: AuthChecks;
  /** The user those checks were passed by: a later change of `userId` does not inherit them. */
  authenticatedUserId?: string;
  /** Wrong TOTP codes entered in this request. */
  otpFailures?: number;
  /** TOTP enrollment: the secret shown to the person until a code confirms it (base32). */
  pendingOtpSecret?: string;
  /** The browser's cookie was renewed in this request (when the password passed). */
  cookieRenewed?: boolean;
}

export type AuthRequestChange = { [K in keyof Omit<AuthRequest, 'id' | 'agentId' | 'createdAt' | 'request' | 'cookieRenewed'>]?: AuthRequest[K] | undefined };

const AUTH_REQUEST_LIFETIME_MS = 30 * 60 * 1000;

export class AuthRequestsActor {
  private readonly requests = new Map<string, AuthRequest>();

  create(
    agentId: string,
    request: ValidatedAuthRequest,
    locale: Locale,
    step: LoginStep,
    start: { userId?: string | undefined; loginName?: string | undefined; checks?: AuthChecks } = {},
  ): AuthRequest {
    const id = randomBytes(18).toString('base64url');
    const created: AuthRequest = { id, agentId, createdAt: clock.now(), request, locale, step, checks: start.checks ?? {} };
    if (start.userId) created.userId = start.userId;
    if (start.loginName) created.loginName = start.loginName;
    // Checks carried over from a browser session belong to its user.
    if (start.checks && start.userId) created.authenticatedUserId = start.userId;
    this.requests.set(id, created);
    return created;
  }

  /** The request if it exists, is unexpired and belongs to this user agent. */
  get(id: string, agentId: string | undefined): AuthRequest | undefined {
    const found = this.requests.get(id);
    if (!found) return undefined;
    if (found.createdAt + AUTH_REQUEST_LIFETIME_MS <= clock.now()) {
      this.requests.delete(id);
      return undefined;
    }
    return found.agentId === agentId ? found : undefined;
  }

  update(request: AuthRequest, change: AuthRequestChange): AuthRequest {
    Object.assign(request, change);
    return request;
  }

  /** The browser got a new cookie: the request now belongs to its new agent id only. */
  rebind(request: AuthRequest, agentId: string): AuthRequest {
    request.agentId = agentId;
    request.cookieRenewed = true;
    return request;
  }

  /** A request is answered once: its response (code or tokens) ends it. */
  finish(id: string): void {
    this.requests.delete(id);
  }

  sweep(now = clock.now()): number {
    let removed = 0;
    for (const [id, r] of this.requests) {
      if (r.createdAt + AUTH_REQUEST_LIFETIME_MS <= now) {
        this.requests.delete(id);
        removed++;
      }
    }
    return removed;
  }
}
