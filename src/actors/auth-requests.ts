import { randomBytes } from 'node:crypto';
import type { ValidatedAuthRequest } from '../oauth/authorize/validate.js';
import type { Locale } from '../ui/i18n.js';
import type { AuthChecks } from '../model/auth-checks.js';
import { clock } from '../util/clock.js';
import { newTotpSecret } from '../auth/totp.js';
import type { View } from '../util/readonly.js';

/**
 * Owns authorization requests while the user signs in: the validated request, the user agent it
 * is bound to, and how far the login got. The login reads them as views and moves them on only
 * through the transitions below (choose a user, pass the password, fail or pass a TOTP code, back
 * to the login name, finish...). They live in memory for at most 30 minutes, on purpose not on
 * disk: a restart sends a user who was mid-login back to the client's start page, which is harmless.
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

/** What the login sees of a request: the request itself, read-only; it changes through the transitions below. */
export type AuthRequestView = { readonly [K in keyof AuthRequest]: K extends 'request' ? AuthRequest[K] : View<AuthRequest[K]> };

export const AUTH_REQUEST_LIFETIME_MS = 30 * 60 * 1000;

export class AuthRequestsActor {
  private readonly requests = new Map<string, AuthRequest>();

  create(
    agentId: string,
    request: ValidatedAuthRequest,
    locale: Locale,
    step: LoginStep,
    start: { userId?: string | undefined; loginName?: string | undefined; checks?: AuthChecks } = {},
  ): AuthRequestView {
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
  get(id: string, agentId: string | undefined): AuthRequestView | undefined {
    const found = this.requests.get(id);
    if (!found) return undefined;
    if (found.createdAt + AUTH_REQUEST_LIFETIME_MS <= clock.now()) {
      this.requests.delete(id);
      return undefined;
    }
    return found.agentId === agentId ? found : undefined;
  }

  /** The request itself, to change: a view handed out earlier sees the change (a request finished meanwhile is left alone). */
  private own(view: AuthRequestView): AuthRequest {
    return (this.requests.get(view.id) as AuthRequest | undefined) ?? (view as AuthRequest);
  }

  /**
   * Entering a step: its TOTP failures start at zero, and enrollment gets a new secret to show
   * (never one another user of the same request saw; dropped on any other step).
   */
  private enter(r: AuthRequest, step: LoginStep): void {
    r.step = step;
    r.otpFailures = 0;
    r.pendingOtpSecret = step === 'mfa-setup' ? newTotpSecret() : undefined;
  }

  /** A login name was entered: its user (undefined when unknown) is asked for the password; nothing passed before counts. */
  chooseUser(view: AuthRequestView, loginName: string, userId: string | undefined): void {
    const r = this.own(view);
    r.loginName = loginName;
    r.userId = userId;
    r.checks = {};
    r.authenticatedUserId = undefined;
    this.enter(r, 'password');
  }

  /** A login name nobody has was entered (and the policy says so): it stays in the form. */
  rememberLoginName(view: AuthRequestView, loginName: string): void {
    this.own(view).loginName = loginName;
  }

  /** Back to the login name: whatever was passed in this request is forgotten. */
  backToLoginName(view: AuthRequestView): void {
    const r = this.own(view);
    r.step = 'loginname';
    r.checks = {};
    r.userId = undefined;
    r.authenticatedUserId = undefined;
    r.pendingOtpSecret = undefined;
  }

  /** The login name page instead of a step with nothing to offer (no account to select, registration not allowed). */
  offerLoginName(view: AuthRequestView): void {
    this.own(view).step = 'loginname';
  }

  /** The registration form. */
  startRegistration(view: AuthRequestView): void {
    this.own(view).step = 'register';
  }

  /** A browser session is resumed for what it still lacks: its user, and the checks it still vouches for. */
  resumeSession(view: AuthRequestView, step: LoginStep, userId: string, checks: AuthChecks | undefined): void {
    const r = this.own(view);
    this.enter(r, step);
    r.userId = userId;
    r.checks = checks ?? {};
    r.authenticatedUserId = checks ? userId : undefined;
  }

  /** The user's password passed (or the user just registered with one): a new password check, so the second factor is asked for again too. */
  passPassword(view: AuthRequestView, userId: string, at: number): void {
    const r = this.own(view);
    r.userId = userId;
    r.authenticatedUserId = userId;
    r.checks = { passwordAt: at };
  }

  /** A wrong TOTP code in this request; the count so far (counted at once, so parallel wrong codes all count). */
  failOtp(view: AuthRequestView): number {
    const r = this.own(view);
    r.otpFailures = (r.otpFailures ?? 0) + 1;
    return r.otpFailures;
  }

  /** A TOTP code passed (a check, or the one confirming enrollment). */
  passOtp(view: AuthRequestView, at: number): void {
    const r = this.own(view);
    r.checks = { ...r.checks, secondFactorAt: at };
    r.pendingOtpSecret = undefined;
  }

  /** TOTP enrollment is left without enrolling this secret (skipped, or enrolled meanwhile in another tab). */
  leaveOtpSetup(view: AuthRequestView): void {
    this.own(view).pendingOtpSecret = undefined;
  }

  /** The next step the login policy asks for (after a passed one), or a step entered again (enrollment without its secret). */
  enterStep(view: AuthRequestView, step: LoginStep): void {
    this.enter(this.own(view), step);
  }

  /** The browser got a new cookie: the request now belongs to its new agent id only. */
  rebind(view: AuthRequestView, agentId: string): void {
    const r = this.own(view);
    r.agentId = agentId;
    r.cookieRenewed = true;
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
