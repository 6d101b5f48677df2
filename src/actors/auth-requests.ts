import { createHmac, randomBytes } from 'node:crypto';
import type { Locale, ValidatedAuthRequest } from '../model/authorization.js';
import { recordKind, type RecordWrite, type StorePort } from '../storage/store-port.js';
import type { Prompt } from '../model/authorization.js';
import type { AuthChecks, SecondFactorKind } from '../model/auth-checks.js';
import type { MasterKey } from '../crypto/master-key.js';
import { clock } from '../util/clock.js';
import { newTotpSecret } from '../crypto/totp.js';
import { openOtpSecret, sealOtpSecret } from '../crypto/otp-secret.js';
import type { View } from '../util/readonly.js';
import type { ExternalIdentity } from '../model/external-identity.js';

/**
 * Authorization requests while the user signs in: the validated request, the user agent it is
 * bound to, and how far the login got. They live in the store, so a request created on any HTTP
 * thread is read on any other. The login reads them as views and moves them on only through the
 * transitions below (choose a user, pass the password, fail or pass a TOTP code, back to the login
 * name, finish...). Each transition is one decision on the request as stored then (so parallel
 * requests, on any threads, each build on the others' changes); it resolves once durable, and
 * changes the caller's view only then. A request lives at most 30 minutes, also across a restart.
 * The TOTP secret shown during enrollment is stored sealed with the master key.
 */
export type LoginStep =
  | 'select'
  | 'loginname'
  | 'password'
  | 'password-change'
  | 'password-reset'
  | 'init'
  | 'verify-email'
  | 'otp'
  | 'otp-email'
  | 'mfa-setup'
  | 'register'
  | 'device-consent'
  | 'consent'
  /** Signed in at an identity provider with an account linked to nobody: link it, or create a person. */
  | 'external'
  /** The user name and password of an LDAP provider's directory. */
  | 'ldap'
  /** A passkey as the first factor (instead of the password). */
  | 'passkey'
  /** A security key as the second factor. */
  | 'u2f'
  /** A security key enrolled as the second factor (from the enrollment step). */
  | 'u2f-setup'
  /** A passkey offered after a password sign-in (passwordlessType ALLOWED). */
  | 'passkey-setup';

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
  /** A round trip to an identity provider under way: what its callback must match (stored sealed; single use). */
  upstream?: UpstreamRoundTrip;
  /** A round trip was started in this request (a provider named by scope is gone to once). */
  upstreamStarted?: boolean;
  /** The LDAP provider whose form the `ldap` step shows. */
  ldapIdpId?: string;
  /** The WebAuthn challenge of the ceremony this step shows (base64url; used once). */
  webauthnChallenge?: string;
  /** An account at an identity provider linked to nobody yet: linked when this sign-in ends, or made a person. */
  external?: ExternalIdentity;
}

export interface UpstreamRoundTrip {
  idpId: string;
  state: string;
  nonce?: string | undefined;
  codeVerifier?: string | undefined;
}

/** What the login sees of a request: the request itself, read-only; it changes through the transitions below. */
export type AuthRequestView = { readonly [K in keyof AuthRequest]: K extends 'request' ? AuthRequest[K] : View<AuthRequest[K]> };

/** An auth request on disk: the prompt set as a list, the enrollment secret sealed, its place among its address's. */
interface StoredAuthRequest extends Omit<AuthRequest, 'request' | 'pendingOtpSecret' | 'upstream'> {
  request: Omit<ValidatedAuthRequest, 'prompt'> & { prompt: Prompt[] };
  pendingOtpSealed?: Uint8Array;
  upstreamSealed?: Uint8Array;
  /** Its place among its address's requests (Decisions.insertBounded), when the address is counted. */
  slot?: string;
}

export const AUTH_REQUEST_LIFETIME_MS = 30 * 60 * 1000;

/** Purpose of the key that turns client addresses into index keys: no address is stored as it is. */
const ADDRESS_KEY_PURPOSE = 'auth-request-address';

const AUTH_REQUESTS = recordKind<StoredAuthRequest>('authRequests');
/** Requests per address, oldest first: `<address MAC>/<sequence>` → request id (StorePort.insertBounded). */
const BY_ADDRESS = recordKind<string>('authRequestsByAddress');
/** A request that ends leaves its place in its address's group with it. */
const leaveGroup = (found: StoredAuthRequest): readonly RecordWrite[] => (found.slot ? [{ leaveGroup: BY_ADDRESS, slot: found.slot }] : []);

export class AuthRequestsActor {
  private readonly addressKey: Buffer;

  constructor(
    private readonly store: StorePort,
    private readonly masterKey: MasterKey,
    /**
     * How many requests one address key may have under way (SESAME_AUTH_REQUESTS_PER_ADDRESS; 0 = no
     * limit). Every authorization request stores one for up to 30 minutes, so one address may not
     * fill the disk with them. A new one beyond the bound takes the place of the address's oldest
     * instead of being refused: a burst from an address many people share (a proxy, a carrier's
     * NAT) then cannot lock them all out for half an hour; it only churns while it lasts. Counted
     * in the store (every thread counts alike) under a keyed MAC of the address, never the address.
     */
    private readonly maxPerAddress = 0,
  ) {
    this.addressKey = masterKey.deriveKey(ADDRESS_KEY_PURPOSE);
  }

  private encode(r: AuthRequest, slot?: string): StoredAuthRequest {
    const { request, pendingOtpSecret, upstream, ...rest } = r;
    return {
      ...rest,
      ...(slot ? { slot } : {}),
      request: { ...request, prompt: [...request.prompt] },
      ...(pendingOtpSecret ? { pendingOtpSealed: sealOtpSecret(this.masterKey, pendingOtpSecret) } : {}),
      // The PKCE verifier and nonce of a round trip under way are secrets: sealed at rest.
      ...(upstream ? { upstreamSealed: this.masterKey.encrypt(Buffer.from(JSON.stringify(upstream), 'utf8')) } : {}),
    };
  }

  private decode(stored: StoredAuthRequest): AuthRequest {
    const { request, pendingOtpSealed, upstreamSealed, slot: _slot, ...rest } = stored;
    return {
      ...rest,
      request: { ...request, prompt: new Set(request.prompt) },
      ...(pendingOtpSealed ? { pendingOtpSecret: openOtpSecret(this.masterKey, pendingOtpSealed) } : {}),
      ...(upstreamSealed ? { upstream: JSON.parse(this.masterKey.decrypt(upstreamSealed).toString('utf8')) as UpstreamRoundTrip } : {}),
    };
  }

  /**
   * A new request; resolves once it is durable (before the browser is sent to the login).
   * `address`: the client's address key, counted against `maxPerAddress` (its oldest request goes
   * when it is reached), in the decision that stores the new one (Decisions.insertBounded).
   */
  async create(
    agentId: string,
    request: ValidatedAuthRequest,
    locale: Locale,
    step: LoginStep,
    start: { userId?: string | undefined; loginName?: string | undefined; checks?: AuthChecks; consentSid?: string; address?: string } = {},
  ): Promise<AuthRequestView> {
    const id = randomBytes(18).toString('base64url');
    const created: AuthRequest = { id, agentId, createdAt: clock.now(), request, locale, step, checks: start.checks ?? {} };
    if (start.userId) created.userId = start.userId;
    if (start.loginName) created.loginName = start.loginName;
    if (start.consentSid) created.consentSid = start.consentSid;
    // Checks carried over from a browser session belong to its user.
    if (start.checks && start.userId) created.authenticatedUserId = start.userId;
    if (start.address !== undefined && this.maxPerAddress > 0) {
      const name = createHmac('sha256', this.addressKey).update(start.address).digest('base64url');
      await this.store.durable(this.store.insertBounded(AUTH_REQUESTS, id, (slot) => this.encode(created, slot), { index: BY_ADDRESS, name, max: this.maxPerAddress }));
    } else {
      await this.store.durable(this.store.put(AUTH_REQUESTS, id, this.encode(created)));
    }
    return created;
  }

  /** The request if it exists, is unexpired and belongs to this user agent. */
  async get(id: string, agentId: string | undefined): Promise<AuthRequestView | undefined> {
    const stored = await this.store.get(AUTH_REQUESTS, id);
    if (!stored || stored.agentId !== agentId) return undefined;
    if (stored.createdAt + AUTH_REQUEST_LIFETIME_MS <= clock.now()) return undefined;
    return this.decode(stored);
  }

  /**
   * Applies a transition to the request as stored now, in one decision, and then to the caller's
   * view (once durable). A request finished meanwhile is not written again (only the caller's view
   * changes). Resolves with the request as stored after it.
   */
  private async change(view: AuthRequestView, apply: (r: AuthRequest) => void): Promise<void> {
    await this.transition(view, apply);
  }

  /** `change`, resolving with the request as stored after it (undefined: finished meanwhile). */
  private async transition(view: AuthRequestView, apply: (r: AuthRequest) => void): Promise<AuthRequest | undefined> {
    const stored = await this.store.durable(
      this.store.update(AUTH_REQUESTS, view.id, (found) => {
        if (!found) return undefined;
        const r = this.decode(found);
        apply(r);
        return this.encode(r, found.slot);
      }),
    );
    const mine = view as AuthRequest;
    if (!stored) {
      apply(mine);
      return undefined;
    }
    // The caller's view becomes the request as stored (other threads' changes included).
    const now = this.decode(stored);
    for (const key of Object.keys(mine) as (keyof AuthRequest)[]) if (!(key in now)) delete mine[key];
    Object.assign(mine, now);
    return now;
  }
  /**
   * Entering a step: its TOTP failures start at zero, and enrollment gets a new secret to show
   * (never one another user of the same request saw; dropped on any other step).
   */
  private static enter(r: AuthRequest, step: LoginStep): void {
    r.step = step;
    r.otpFailures = 0;
    r.pendingOtpSecret = step === 'mfa-setup' ? newTotpSecret() : undefined;
    // A ceremony's challenge is its page's: another step shows its own.
    r.webauthnChallenge = undefined;
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
   * A wrong TOTP code in this request: resolves with the count so far, as the store counted it
   * (parallel wrong codes, on any threads, all count).
   */
  async failOtp(view: AuthRequestView): Promise<number> {
    const after = await this.transition(view, (r) => {
      r.otpFailures = (r.otpFailures ?? 0) + 1;
    });
    return after?.otpFailures ?? view.otpFailures ?? 1;
  }

  /** A second factor passed (a TOTP or mailed code, a security key; or the one confirming enrollment). */
  passOtp(view: AuthRequestView, at: number, kind: SecondFactorKind = 'otp'): Promise<void> {
    return this.change(view, (r) => {
      r.checks = { ...r.checks, secondFactorAt: at, ...(kind === 'otp' ? { secondFactorKind: undefined } : { secondFactorKind: kind }) };
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

  /** The browser leaves for an identity provider: what its callback must match (a new round trip replaces one under way). */
  startUpstream(view: AuthRequestView, upstream: UpstreamRoundTrip): Promise<void> {
    return this.change(view, (r) => {
      r.upstream = upstream;
      r.upstreamStarted = true;
    });
  }

  /**
   * The callback of a round trip: the one under way as stored, taken (single use: a replayed
   * callback, on any thread, finds none); undefined when there is none.
   */
  takeUpstream(view: AuthRequestView): Promise<UpstreamRoundTrip | undefined> {
    return this.take(view, 'upstream');
  }

  /** A WebAuthn ceremony's challenge for the step now shown (a new one per page). */
  setChallenge(view: AuthRequestView, challenge: string): Promise<void> {
    return this.change(view, (r) => {
      r.webauthnChallenge = challenge;
    });
  }

  /** The challenge of the ceremony answered, as stored, taken (used once, on any thread); undefined when there is none. */
  takeChallenge(view: AuthRequestView): Promise<string | undefined> {
    return this.take(view, 'webauthnChallenge');
  }

  /**
   * Takes a value of the request as stored, once (one caller on any thread gets it); undefined when
   * there is none, or the request is gone (finished by a parallel request): never from the caller's
   * copy of it, which `transition` changes too.
   */
  private async take<K extends 'upstream' | 'webauthnChallenge'>(view: AuthRequestView, key: K): Promise<AuthRequest[K] | undefined> {
    let taken: AuthRequest[K] | undefined;
    const stored = await this.transition(view, (r) => {
      taken = r[key];
      r[key] = undefined;
    });
    return stored ? taken : undefined;
  }

  /** A passkey passed as the first factor (two factors in one, ZITADEL's passwordless). */
  passPasskey(view: AuthRequestView, userId: string, at: number): Promise<void> {
    return this.change(view, (r) => {
      r.userId = userId;
      r.authenticatedUserId = userId;
      r.checks = { passwordlessAt: at };
    });
  }

  /** The form of an LDAP provider. */
  enterLdap(view: AuthRequestView, idpId: string): Promise<void> {
    return this.change(view, (r) => {
      AuthRequestsActor.enter(r, 'ldap');
      r.ldapIdpId = idpId;
      r.upstreamStarted = true;
    });
  }

  /** The person signed in at an identity provider with an account linked to them: the first factor of this sign-in. */
  passIdp(view: AuthRequestView, userId: string, idpId: string, at: number): Promise<void> {
    return this.change(view, (r) => {
      r.userId = userId;
      r.authenticatedUserId = userId;
      r.checks = { idpAt: at, idpId };
      r.external = undefined;
      r.loginName = undefined;
    });
  }

  /** An account linked to nobody: the person chooses to link it to an account they sign in to, or to create one. */
  awaitExternalChoice(view: AuthRequestView, identity: ExternalIdentity): Promise<void> {
    return this.change(view, (r) => {
      r.external = identity;
      r.checks = {};
      r.userId = undefined;
      r.authenticatedUserId = undefined;
      AuthRequestsActor.enter(r, 'external');
    });
  }

  /** The account at the provider was linked (or is not to be): the sign-in goes on without it. */
  dropExternal(view: AuthRequestView): Promise<void> {
    return this.change(view, (r) => {
      r.external = undefined;
    });
  }

  /** The browser got a new cookie: the request now belongs to its new agent id only. */
  rebind(view: AuthRequestView, agentId: string): Promise<void> {
    return this.change(view, (r) => {
      r.agentId = agentId;
      r.cookieRenewed = true;
    });
  }

  /** A request is answered once: its response (code or tokens) ends it (and frees its address's place). Resolves once the removal is durable. */
  async finish(id: string): Promise<void> {
    await this.store.durable(this.store.takeOnce(AUTH_REQUESTS, id, leaveGroup));
  }

  /** Removes expired requests (with their index entries). */
  sweep(now = clock.now()): Promise<number> {
    return this.store.durable(
      this.store.sweep(
        AUTH_REQUESTS,
        (r) => r.createdAt + AUTH_REQUEST_LIFETIME_MS <= now,
        (_id, r) => leaveGroup(r),
      ),
    );
  }
}
