import type { Editor } from '../model/activity.js';
import { viewWith } from '../actors/acting-for.js';
import type { NewHuman } from '../actors/new-human.js';
import type { OrgsActor } from '../actors/orgs.js';
import type { LeasesActor } from '../actors/leases.js';
import type { IdpLink, UserRecord, WebAuthnToken } from '../model/records.js';
import type { ExternalIdentity } from '../domain/external-identity.js';
import { EMAIL, MAX_PASSWORD } from '../domain/human-users.js';
import { beginningAt, predatesHorizon } from '../domain/revocation-horizon.js';
import type { CryptoPool } from '../workers/pool.js';
import type { View } from '../util/readonly.js';

/**
 * What the login pages decide about people in the directory: password checks with their lockout
 * count, TOTP failure counts and enrollment, a required password change, a registration. Decided
 * on whichever thread serves the page, against the person as stored (each change a
 * compare-and-set on the stored row, Table.change): parallel wrong passwords or codes on every
 * thread count once each and lock at exactly the limit. A person's password checks run one at a
 * time whichever thread received them (a lease in the store), so a burst of guesses gets no more
 * real checks than the lockout policy allows. Answers carry the user as written.
 */
export interface LoginDirectory {
  /**
   * Checks a password of the user (undefined: nobody to check, the same work against a hash that
   * never matches); one check of a user at a time, counted against the org's lockout policy.
   */
  checkPassword(userId: string | undefined, password: string): Promise<PasswordCheck>;
  /**
   * Counts a wrong TOTP code of a sign-in whose password was passed at `passedAt` against the
   * lockout policy's `maxOtpAttempts`; `user` as written. `over`: that sign-in had ended (the
   * person locked or reset meanwhile, by a parallel request on any thread): nothing counted.
   */
  recordOtpFailure(userId: string, passedAt: number): Promise<{ locked: boolean; over: boolean; user: View<UserRecord> | undefined }>;
  /** A right TOTP code of a sign-in passed at `passedAt`: false when that sign-in had ended meanwhile (nothing reset then). */
  recordOtpSuccess(userId: string, passedAt: number): Promise<boolean>;
  /**
   * Enrolls a TOTP secret (sealed) for a sign-in whose password was passed at `passedAt` (Unix
   * seconds): undefined when that sign-in is over (a reset or lock meanwhile). Throws AlreadyExists
   * when the person has one.
   */
  enrollOtp(userId: string, sealedSecret: Uint8Array, passedAt: number): Promise<View<UserRecord> | undefined>;
  /** The person skipped the TOTP enrollment prompt at `at` (ms). */
  skipMfaInit(userId: string, at: number): Promise<View<UserRecord> | undefined>;
  /**
   * The person's new password (a required change) for a sign-in passed at `passedAt`: hashed, then
   * set, unless the sign-in is over by then (undefined).
   */
  changePassword(userId: string, password: string, passedAt: number): Promise<View<UserRecord> | undefined>;
  /** A person registering at the login with a password (hashed here). Throws AlreadyExists for a taken name. */
  register(orgId: string, person: NewHuman, password: string): Promise<View<UserRecord>>;
  /** Codes by email become the person's second factor (their address verified), while the sign-in that enrolls them stands. */
  enrollOtpEmail(userId: string, passedAt: number): Promise<View<UserRecord> | undefined>;
  /** A password set with a mailed code (reset, initialization), hashed here; see OrgsActor.setPasswordByCode. */
  setPasswordByCode(userId: string, password: string, verifiedEmail?: string): Promise<View<UserRecord>>;
  /** The person's email is verified (a code sent to `email` came back); undefined when it is no longer theirs. */
  verifyEmail(userId: string, email: string): Promise<View<UserRecord> | undefined>;
  /** Links an account at an identity provider to the person, for a sign-in passed at `passedAt` that still stands (undefined: over). */
  linkIdp(userId: string, link: IdpLink, passedAt: number): Promise<View<UserRecord> | undefined>;
  /**
   * The person as stored, if the account at a provider is still linked to them: what a sign-in by
   * that account goes on with (an unlink, a lock on another thread or node included).
   */
  linkedPerson(userId: string, link: Pick<IdpLink, 'idpId' | 'externalUserId'>): Promise<View<UserRecord> | undefined>;
  /** A new person made from an account at an identity provider (no password), linked to it. Throws AlreadyExists for a taken name or account. */
  registerFromIdp(orgId: string, person: NewHuman, link: IdpLink): Promise<View<UserRecord>>;
  /** The provider's word on the person (its `isAutoUpdate`); see OrgsActor.updateFromIdp. */
  updateFromIdp(userId: string, identity: ExternalIdentity): Promise<View<UserRecord> | undefined>;
  /** A passkey or security key of the person, for a sign-in passed at `passedAt` that still stands (undefined: over); undefined `passedAt`: a link's registration. */
  enrollWebAuthn(userId: string, token: WebAuthnToken, passedAt: number | undefined): Promise<View<UserRecord> | undefined>;
  /**
   * A token signed a sign-in with this counter (see OrgsActor.useWebAuthnToken), decided on the
   * person as stored: for a second factor, only while the sign-in whose first factor passed at
   * `passedAt` stands; for a passkey (no `passedAt`), only while the person may sign in. This
   * thread's copy of the person is the stored one afterwards (what the page says goes by it).
   */
  useWebAuthn(userId: string, credentialId: string, counter: number, passedAt?: number): Promise<boolean>;
  /** The person skipped the offer to set up a passkey at `at` (ms). */
  skipPasskeyPrompt(userId: string, at: number): Promise<void>;
  /**
   * These decisions for a client at `address`: the activity log records the changes as the
   * person's own (the login), or as `editor`'s (an API caller who brings the person's code).
   */
  from(address: string | undefined, editor?: Editor): LoginDirectory;
}

/** The outcome of a password check. */
export type PasswordCheck =
  /** The password is right; `checkedAt` (Unix seconds) is when the check counts from. */
  | { result: 'passed'; user: View<UserRecord>; checkedAt: number }
  /** Wrong (or the person may not sign in: the same answer); `locked` when this check locked the account. */
  | { result: 'wrong'; locked: boolean; user: View<UserRecord> | undefined }
  /** The account was locked before the check (which ran anyway against a hash that never matches). */
  | { result: 'locked'; user: View<UserRecord> }
  /** Right, but the org's login policy allows no password (told only to who knows the password). */
  | { result: 'notAllowed' };

/** How long a person's password check may hold its lease: a holder that dies frees it then. */
const PASSWORD_CHECK_LEASE_MS = 60_000;

/** The password work the checks need: the pool on the main thread, the main thread's pool asked over a port on the others. */
export type PasswordWork = Pick<CryptoPool, 'hashPassword' | 'verifyPassword'>;

/**
 * The login's decisions on one thread: `orgs` is this thread's copy of the directory (people are
 * read again as stored before a decision; a new person's name is taken in the store), `leases`
 * this thread's holder of leases, `passwords` the password pool (the main thread's, asked over a
 * port on the others).
 */
export class LoginDecisions implements LoginDirectory {
  /** A hash that never matches, verified for unknown users so they cost the same time as known ones (shared by the views `from` makes). */
  private readonly dummy: { hash?: Promise<string> } = {};
  /** The client's address, and who acts when not the person (see from). */
  readonly address: string | undefined = undefined;
  readonly editor: Editor | undefined = undefined;

  constructor(
    private readonly orgs: OrgsActor,
    private readonly passwords: PasswordWork,
    private readonly leases: LeasesActor,
  ) {}

  /** A password check against a hash that never matches: the time a real check takes. */
  private async dummyCheck(password: string): Promise<void> {
    this.dummy.hash ??= this.passwords.hashPassword('sesame-dummy-password');
    await this.passwords.verifyPassword(password.slice(0, MAX_PASSWORD), await this.dummy.hash);
  }

  from(address: string | undefined, editor?: Editor): LoginDirectory {
    return viewWith<LoginDecisions>(this, { address, editor });
  }

  /** The directory acting for the person (or, registering, for someone not yet known: ''), from this client; or for the API caller. */
  private by(userId: string): OrgsActor {
    return this.orgs.by(this.editor ?? { userId, service: 'login', address: this.address });
  }

  async checkPassword(userId: string | undefined, password: string): Promise<PasswordCheck> {
    const known = userId === undefined ? undefined : this.orgs.getUser(userId);
    if (!known?.human?.passwordHash || password.length > MAX_PASSWORD) {
      // Same work and same answer as a wrong password: the page does not tell who exists.
      await this.dummyCheck(password);
      return { result: 'wrong', locked: false, user: undefined };
    }
    return this.leases.exclusive(`password-check:${known.id}`, PASSWORD_CHECK_LEASE_MS, async () => {
      // As stored: an earlier check of this user, on any thread, may have just locked it (or it is gone).
      const user = await this.orgs.storedUser(known.id);
      if (!user?.human?.passwordHash) {
        await this.dummyCheck(password);
        return { result: 'wrong', locked: false, user: undefined };
      }
      if (user.state === 'USER_STATE_LOCKED') {
        // As long as a real check, so timing does not tell a locked account (showLockoutFailure=false).
        await this.dummyCheck(password);
        return { result: 'locked', user };
      }
      const hash = user.human.passwordHash;
      // The check is of the hash read now: it counts from now (an administrator's reset while it
      // runs makes it older than the reset: the sign-in goes no further).
      const checkedAt = beginningAt(user);
      const verified = await this.passwords.verifyPassword(password, hash);
      if (!verified.ok) {
        // Counted whatever the login policy says, so a disallowed password login is no unlimited oracle.
        if (!this.orgs.isActive(user)) return { result: 'wrong', locked: false, user };
        const { locked } = await this.by(user.id).recordPasswordFailure(user.id);
        // Locked by wrong passwords: the sessions stay (suspended while locked, as in ZITADEL), since
        // anyone who knows a login name could otherwise end every session of that person.
        return { result: 'wrong', locked, user: this.orgs.getUser(user.id) };
      }
      if (!this.orgs.isActive(user)) return { result: 'wrong', locked: false, user };
      // Told only to whoever knows the password: before the check it would tell that the account exists.
      if (!this.orgs.policy('login', user.orgId).policy.allowUsernamePassword) return { result: 'notAllowed' };
      // A rehash replaces only the hash just verified, never one an administrator set meanwhile.
      const rehash = verified.needsRehash ? { verified: hash, rehashed: await this.passwords.hashPassword(password) } : undefined;
      await this.by(user.id).recordPasswordSuccess(user.id, rehash);
      // As stored after the check: a reset or lock meanwhile (on any thread) is what the sign-in goes on with, and ends it.
      const after = await this.orgs.storedUser(user.id);
      return after ? { result: 'passed', user: after, checkedAt } : { result: 'wrong', locked: false, user: undefined };
    });
  }

  async recordOtpFailure(userId: string, passedAt: number): Promise<{ locked: boolean; over: boolean; user: View<UserRecord> | undefined }> {
    // Counted on the person as stored: parallel wrong codes on every thread count up to the lock, and no further.
    const { locked, over } = await this.by(userId).recordOtpFailure(userId, this.stillSignedIn(passedAt));
    return { locked, over, user: this.orgs.getUser(userId) };
  }

  recordOtpSuccess(userId: string, passedAt: number): Promise<boolean> {
    return this.by(userId).recordOtpSuccess(userId, this.stillSignedIn(passedAt));
  }

  enrollOtp(userId: string, sealedSecret: Uint8Array, passedAt: number): Promise<View<UserRecord> | undefined> {
    return this.by(userId).enrollOtp(userId, sealedSecret, this.stillSignedIn(passedAt));
  }

  async skipMfaInit(userId: string, at: number): Promise<View<UserRecord> | undefined> {
    await this.by(userId).skipMfaInit(userId, at);
    return this.orgs.getUser(userId);
  }

  async changePassword(userId: string, password: string, passedAt: number): Promise<View<UserRecord> | undefined> {
    const passwordHash = await this.passwords.hashPassword(password);
    // Still this sign-in's as stored when it is set (an administrator's reset meanwhile ends it):
    // else the person who passed the old password would replace the password just reset.
    return this.by(userId).changePassword(userId, passwordHash, this.stillSignedIn(passedAt));
  }

  async register(orgId: string, person: NewHuman, password: string): Promise<View<UserRecord>> {
    const passwordHash = await this.passwords.hashPassword(password);
    return this.by('').addUser(orgId, { person, credentials: { passwordHash } });
  }

  enrollOtpEmail(userId: string, passedAt: number): Promise<View<UserRecord> | undefined> {
    return this.by(userId).setOtpEmail(userId, true, this.stillSignedIn(passedAt));
  }

  async setPasswordByCode(userId: string, password: string, verifiedEmail?: string): Promise<View<UserRecord>> {
    const passwordHash = await this.passwords.hashPassword(password);
    return this.by(userId).setPasswordByCode(userId, passwordHash, verifiedEmail);
  }

  verifyEmail(userId: string, email: string): Promise<View<UserRecord> | undefined> {
    return this.by(userId).verifyEmail(userId, email);
  }

  async linkIdp(userId: string, link: IdpLink, passedAt: number): Promise<View<UserRecord> | undefined> {
    // Taken in as stored first (a lock on another thread included); the link is then decided on that row.
    await this.orgs.storedUser(userId);
    return this.by(userId).addIdpLink(userId, link, undefined, this.stillSignedIn(passedAt));
  }

  async linkedPerson(userId: string, link: Pick<IdpLink, 'idpId' | 'externalUserId'>): Promise<View<UserRecord> | undefined> {
    const stored = await this.orgs.storedUser(userId);
    return stored?.human?.idpLinks?.some((l) => l.idpId === link.idpId && l.externalUserId === link.externalUserId) ? stored : undefined;
  }

  registerFromIdp(orgId: string, person: NewHuman, link: IdpLink): Promise<View<UserRecord>> {
    // Active at once: the account at the provider is how they sign in (ZITADEL's initial state is for people who cannot).
    return this.by('').addUserWithIdpLinks(orgId, { person, credentials: { state: 'USER_STATE_ACTIVE' } }, [link]);
  }

  updateFromIdp(userId: string, identity: ExternalIdentity): Promise<View<UserRecord> | undefined> {
    return this.by(userId).updateFromIdp(
      userId,
      { firstName: identity.firstName, lastName: identity.lastName, displayName: identity.displayName, nickName: identity.nickName, preferredLanguage: identity.preferredLanguage },
      // Only what Sesame would take from a person: an address, a phone number in international form.
      EMAIL.test(identity.email) ? { email: identity.email, isEmailVerified: identity.emailVerified } : undefined,
      identity.phone.startsWith('+') ? { phone: identity.phone, isPhoneVerified: identity.phoneVerified } : undefined,
    );
  }

  enrollWebAuthn(userId: string, token: WebAuthnToken, passedAt: number | undefined): Promise<View<UserRecord> | undefined> {
    return this.by(userId).addWebAuthnToken(userId, token, passedAt === undefined ? (stored) => stored.state === 'USER_STATE_INITIAL' || this.orgs.isActive(stored) : this.stillSignedIn(passedAt));
  }

  async useWebAuthn(userId: string, credentialId: string, counter: number, passedAt?: number): Promise<boolean> {
    await this.orgs.storedUser(userId);
    return this.by(userId).useWebAuthnToken(userId, credentialId, counter, passedAt === undefined ? (stored) => this.orgs.isActive(stored) : this.stillSignedIn(passedAt));
  }

  skipPasskeyPrompt(userId: string, at: number): Promise<void> {
    return this.by(userId).skipPasskeyPrompt(userId, at);
  }

  /** Whether a sign-in passed at `passedAt` still stands for the person as stored: active, and nothing since (a reset, a lock) voided it. */
  private stillSignedIn(passedAt: number): (stored: View<UserRecord>) => boolean {
    return (stored) => this.orgs.isActive(stored) && !predatesHorizon(stored, passedAt);
  }
}
