import { randomBytes } from 'node:crypto';
import type { Locale, ValidatedAuthRequest } from '../model/authorization.js';
import type { Database } from 'lmdb';
import type { Prompt } from '../model/authorization.js';
import type { AuthChecks } from '../model/auth-checks.js';
import type { MasterKey } from '../crypto/master-key.js';
import { clock } from '../util/clock.js';
import { newTotpSecret } from '../crypto/totp.js';
import { openOtpSecret, sealOtpSecret } from '../crypto/otp-secret.js';
import type { View } from '../util/readonly.js';

/**
 * Owns authorization requests while the user signs in: the validated request, the user agent it
 * is bound to, and how far the login got. The login reads them as views and moves them on only
 * through the transitions below (choose a user, pass the password, fail or pass a TOTP code, back
 * to the login name, finish...). Each transition changes memory at once (parallel requests see
 * it) and resolves once it is durable; a write that fails takes the change back. A request lives
 * at most 30 minutes, also across a restart. The TOTP secret shown during enrollment is stored
 * sealed with the master key.
 */
export type LoginStep = 'select' | 'loginname' | 'password' | 'password-change' | 'otp' | 'mfa-setup' | 'register' | 'device-consent' | 'consent';

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
  /** A consent step (a device, or a self-registered client): the browser session whose person is asked to allow it. */
  consentSid?: string;
}

/** What the login sees of a request: the request itself, read-only; it changes through the transitions below. */
export type AuthRequestView = { readonly [K in keyof AuthRequest]: K extends 'request' ? AuthRequest[K] : View<AuthRequest[K]> };

/** An auth request on disk: the prompt set as a list, the enrollment secret sealed. */
interface StoredAuthRequest extends Omit<AuthRequest, 'request' | 'pendingOtpSecret'> {
  request: Omit<ValidatedAuthRequest, 'prompt'> & { prompt: Prompt[] };
  pendingOtpSealed?: Uint8Array;
}

export const AUTH_REQUEST_LIFETIME_MS = 30 * 60 * 1000;

export class AuthRequestsActor {
  private readonly requests = new Map<string, AuthRequest>();
  /** Per request: the number of its last change, and its state as last written (what a failed write goes back to). */
  private readonly versions = new WeakMap<AuthRequest, number>();
  private readonly written = new WeakMap<AuthRequest, { version: number; state: AuthRequest }>();
  /** Expired requests found on disk at start, removed by the next sweep. */
  private expiredOnDisk: string[] = [];
  /**
   * Requests under way per client address key, oldest first, and the key of each: every
   * authorization request stores one for up to 30 minutes, so one address may not fill memory and
   * disk with them. A new one beyond the bound takes the place of the address's oldest instead of
   * being refused: a burst from an address many people share (a proxy, a carrier's NAT) then
   * cannot lock them all out for half an hour; it only churns while it lasts. Kept in memory only
   * (no addresses on disk); after a restart the count starts again.
   */
  private readonly perAddress = new Map<string, Set<string>>();
  private readonly addressOf = new Map<string, string>();

  constructor(
    private readonly db: Database<StoredAuthRequest, string>,
    private readonly masterKey: MasterKey,
    private readonly durable: <R>(write: Promise<R>) => Promise<R> = (write) => write,
    /** How many requests one address key may have under way (SESAME_AUTH_REQUESTS_PER_ADDRESS; 0 = no limit). */
    private readonly maxPerAddress = 0,
  ) {
    const now = clock.now();
    for (const { key, value } of db.getRange()) {
      if (value.createdAt + AUTH_REQUEST_LIFETIME_MS <= now) {
        this.expiredOnDisk.push(key);
        continue;
      }
      const request = this.decode(value);
      this.requests.set(request.id, request);
      this.written.set(request, { version: 0, state: { ...request } });
    }
  }

  private encode(r: AuthRequest): StoredAuthRequest {
    const { request, pendingOtpSecret, ...rest } = r;
    return {
      ...rest,
      request: { ...request, prompt: [...request.prompt] },
      ...(pendingOtpSecret ? { pendingOtpSealed: sealOtpSecret(this.masterKey, pendingOtpSecret) } : {}),
    };
  }

  private decode(stored: StoredAuthRequest): AuthRequest {
    const { request, pendingOtpSealed, ...rest } = stored;
    return {
      ...rest,
      request: { ...request, prompt: new Set(request.prompt) },
      ...(pendingOtpSealed ? { pendingOtpSecret: openOtpSecret(this.masterKey, pendingOtpSealed) } : {}),
    };
  }

  /**
   * A new request; resolves once it is durable (before the browser is sent to the login).
   * `address`: the client's address key, counted against `maxPerAddress` (its oldest request goes when it is reached).
   */
  async create(
    agentId: string,
    request: ValidatedAuthRequest,
    locale: Locale,
    step: LoginStep,
    start: { userId?: string | undefined; loginName?: string | undefined; checks?: AuthChecks; consentSid?: string; address?: string } = {},
  ): Promise<AuthRequestView> {
    const id = randomBytes(18).toString('base64url');
    if (start.address !== undefined && this.maxPerAddress > 0) this.hold(id, start.address);
    const created: AuthRequest = { id, agentId, createdAt: clock.now(), request, locale, step, checks: start.checks ?? {} };
    if (start.userId) created.userId = start.userId;
    if (start.loginName) created.loginName = start.loginName;
    if (start.consentSid) created.consentSid = start.consentSid;
    // Checks carried over from a browser session belong to its user.
    if (start.checks && start.userId) created.authenticatedUserId = start.userId;
    this.requests.set(id, created);
    this.versions.set(created, 0);
    try {
      await this.durable(this.db.put(id, this.encode(created)));
    } catch (error) {
      if (this.requests.get(id) === created) this.requests.delete(id);
      this.release(id);
      throw error;
    }
    this.written.set(created, { version: 0, state: { ...created } });
    return created;
  }

  private hold(id: string, address: string): void {
    let ids = this.perAddress.get(address);
    if (!ids) this.perAddress.set(address, (ids = new Set()));
    for (const oldest of ids) {
      if (ids.size < this.maxPerAddress) break;
      this.evict(oldest);
    }
    ids.add(id);
    this.addressOf.set(id, address);
  }

  private release(id: string): void {
    const address = this.addressOf.get(id);
    if (address === undefined) return;
    this.addressOf.delete(id);
    const ids = this.perAddress.get(address);
    ids?.delete(id);
    if (ids?.size === 0) this.perAddress.delete(address);
  }

  /** Ends a request to make room (see perAddress); its record goes in the background, else with the next start's expired ones. */
  private evict(id: string): void {
    this.requests.delete(id);
    this.release(id);
    this.durable(this.db.remove(id)).catch(() => undefined);
  }

  /** The request if it exists, is unexpired and belongs to this user agent. */
  get(id: string, agentId: string | undefined): AuthRequestView | undefined {
    const found = this.requests.get(id);
    if (!found) return undefined;
    if (found.createdAt + AUTH_REQUEST_LIFETIME_MS <= clock.now()) return undefined;
    return found.agentId === agentId ? found : undefined;
  }

  /**
   * Applies a transition: memory at once, then the write. A request finished meanwhile is not
   * written again (only the caller's view changes). If the write fails and no later change came,
   * the request goes back to its state as last written.
   */
  private change(view: AuthRequestView, apply: (r: AuthRequest) => void): Promise<void> {
    const r = this.requests.get(view.id);
    if (r !== view) {
      apply(view as AuthRequest);
      return Promise.resolve();
    }
    apply(r);
    const version = (this.versions.get(r) ?? 0) + 1;
    this.versions.set(r, version);
    const state = { ...r };
    return this.durable(this.db.put(r.id, this.encode(r))).then(
      () => {
        if (version > (this.written.get(r)?.version ?? -1)) this.written.set(r, { version, state });
      },
      (error: unknown) => {
        const last = this.written.get(r);
        if (this.versions.get(r) === version && last) {
          for (const key of Object.keys(r) as (keyof AuthRequest)[]) if (!(key in last.state)) delete r[key];
          Object.assign(r, last.state);
        }
        throw error;
      },
    );
  }

  /**
   * Entering a step: its TOTP failures start at zero, and enrollment gets a new secret to show
   * (never one another user of the same request saw; dropped on any other step).
   */
  private static enter(r: AuthRequest, step: LoginStep): void {
    r.step = step;
    r.otpFailures = 0;
    r.pendingOtpSecret = step === 'mfa-setup' ? newTotpSecret() : undefined;
  }

  /** A login name was entered: its user (undefined when unknown) is asked for the password; nothing passed before counts. */
  chooseUser(view: AuthRequestView, loginName: string, userId: string | undefined): Promise<void> {
    return this.change(view, (r) => {
      r.loginName = loginName;
      r.userId = userId;
      r.checks = {};
      r.authenticatedUserId = undefined;
      AuthRequestsActor.enter(r, 'password');
    });
  }

  /** A login name nobody has was entered (and the policy says so): it stays in the form. */
  rememberLoginName(view: AuthRequestView, loginName: string): Promise<void> {
    return this.change(view, (r) => {
      r.loginName = loginName;
    });
  }

  /** Back to the login name: whatever was passed in this request is forgotten. */
  backToLoginName(view: AuthRequestView): Promise<void> {
    return this.change(view, (r) => {
      r.step = 'loginname';
      r.checks = {};
      r.userId = undefined;
      r.authenticatedUserId = undefined;
      r.pendingOtpSecret = undefined;
    });
  }

  /** The login name page instead of a step with nothing to offer (no account to select, registration not allowed). */
  offerLoginName(view: AuthRequestView): Promise<void> {
    return this.change(view, (r) => {
      r.step = 'loginname';
    });
  }

  /** The registration form. */
  startRegistration(view: AuthRequestView): Promise<void> {
    return this.change(view, (r) => {
      r.step = 'register';
    });
  }

  /** A browser session is resumed for what it still lacks: its user, and the checks it still vouches for. */
  resumeSession(view: AuthRequestView, step: LoginStep, userId: string, checks: AuthChecks | undefined): Promise<void> {
    return this.change(view, (r) => {
      AuthRequestsActor.enter(r, step);
      r.userId = userId;
      r.checks = checks ?? {};
      r.authenticatedUserId = checks ? userId : undefined;
    });
  }

  /** The user's password passed (or the user just registered with one): a new password check, so the second factor is asked for again too. */
  passPassword(view: AuthRequestView, userId: string, at: number): Promise<void> {
    return this.change(view, (r) => {
      r.userId = userId;
      r.authenticatedUserId = userId;
      r.checks = { passwordAt: at };
    });
  }

  /**
   * The person replaced the password they just passed (a required change): that is a password
   * check now, so the sign-in outlives the revocation horizon its own change moved.
   */
  renewPasswordCheck(view: AuthRequestView, at: number): Promise<void> {
    return this.change(view, (r) => {
      r.checks = { ...r.checks, passwordAt: at };
    });
  }

  /**
   * A wrong TOTP code in this request: the count so far, counted at once (parallel wrong codes all
   * count), and its write.
   */
  failOtp(view: AuthRequestView): { failures: number; written: Promise<void> } {
    let failures = 0;
    const written = this.change(view, (r) => {
      failures = r.otpFailures = (r.otpFailures ?? 0) + 1;
    });
    return { failures, written };
  }

  /** A TOTP code passed (a check, or the one confirming enrollment). */
  passOtp(view: AuthRequestView, at: number): Promise<void> {
    return this.change(view, (r) => {
      r.checks = { ...r.checks, secondFactorAt: at };
      r.pendingOtpSecret = undefined;
    });
  }

  /** TOTP enrollment is left without enrolling this secret (skipped, or enrolled meanwhile in another tab). */
  leaveOtpSetup(view: AuthRequestView): Promise<void> {
    return this.change(view, (r) => {
      r.pendingOtpSecret = undefined;
    });
  }

  /** The next step the login policy asks for (after a passed one), or a step entered again (enrollment without its secret). */
  enterStep(view: AuthRequestView, step: LoginStep): Promise<void> {
    return this.change(view, (r) => AuthRequestsActor.enter(r, step));
  }

  /** The person is asked to allow a device, or a self-registered client, in browser session `sid`. */
  askConsent(view: AuthRequestView, step: 'device-consent' | 'consent', sid: string): Promise<void> {
    return this.change(view, (r) => {
      AuthRequestsActor.enter(r, step);
      r.consentSid = sid;
    });
  }

  /** The browser got a new cookie: the request now belongs to its new agent id only. */
  rebind(view: AuthRequestView, agentId: string): Promise<void> {
    return this.change(view, (r) => {
      r.agentId = agentId;
      r.cookieRenewed = true;
    });
  }

  /** A request is answered once: its response (code or tokens) ends it. Resolves once the removal is durable. */
  async finish(id: string): Promise<void> {
    const r = this.requests.get(id);
    if (!r) return;
    this.requests.delete(id);
    // The address may start another at once (a failed removal leaves this one uncounted: it still expires).
    this.release(id);
    try {
      await this.durable(this.db.remove(id));
    } catch (error) {
      if (!this.requests.has(id)) this.requests.set(id, r);
      throw error;
    }
  }

  async sweep(now = clock.now()): Promise<number> {
    const removed = this.expiredOnDisk;
    this.expiredOnDisk = [];
    for (const [id, r] of this.requests) {
      if (r.createdAt + AUTH_REQUEST_LIFETIME_MS <= now) {
        this.requests.delete(id);
        this.release(id);
        removed.push(id);
      }
    }
    await this.durable(Promise.all(removed.map((id) => this.db.remove(id))));
    return removed.length;
  }
}
