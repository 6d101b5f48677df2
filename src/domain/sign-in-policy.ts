import { isExternal, type AuthChecks } from '../model/auth-checks.js';
import { OTP_EMAIL_SECOND_FACTOR, OTP_SECOND_FACTOR, U2F_SECOND_FACTOR, U2F_WITH_VERIFICATION, type LoginPolicy, type UserRecord } from '../model/records.js';
import type { View } from '../util/readonly.js';
import { preconditionFailed } from '../model/errors.js';

/** Whether people under a login policy sign in with passkeys (ZITADEL's PASSWORDLESS_TYPE_ALLOWED). */
export function passkeysAllowed(policy: View<Pick<LoginPolicy, 'passwordlessType'>>): boolean {
  return policy.passwordlessType === 'PASSWORDLESS_TYPE_ALLOWED';
}

/**
 * Refuses a passkey registration where `whose` login policy (named so in the message) does not
 * allow passkeys: one the login could not use would leave a person made without a password no way in.
 */
export function requirePasskeysAllowed(policy: View<Pick<LoginPolicy, 'passwordlessType'>>, whose: string): void {
  if (!passkeysAllowed(policy)) throw preconditionFailed('USER-Pwl0s', `${whose} login policy does not allow passkeys (passwordlessType PASSWORDLESS_TYPE_ALLOWED)`);
}

/**
 * The sign-in's one home: which step comes next, as a pure function of the facts (the request,
 * the person, the checks passed, the org's login policy, the time), in the style of
 * node-oidc-provider's interaction policy: an ordered list of steps, each with the checks that
 * make it needed, each check with a reason. The first step with a needed check is next; none:
 * the sign-in is done. The login routes gather the facts, ask, and render the step; the authorize
 * endpoint asks the same for a browser session that might answer at once. ZITADEL's rules
 * (`nextSteps`, `firstFactorChecked`, `mfaChecked` in internal/auth/repository/…/auth_request.go)
 * decide the order. Times: `now` in epoch ms, check times in Unix seconds (as `auth_time`).
 */
export interface UserFacts {
  hasOtp: boolean;
  /** A security key (WebAuthn, U2F) is a second factor of the person. */
  hasU2f?: boolean;
  /** The person has a passkey (a passwordless WebAuthn credential). */
  hasPasskey?: boolean;
  /** Epoch ms of the last skipped offer to set up a passkey. */
  passkeyPromptSkippedAt?: number | undefined;
  /** One-time codes by email are the person's second factor. */
  hasOtpEmail?: boolean;
  passwordChangeRequired: boolean;
  /** The address is not verified and a verification can be mailed (ZITADEL's login stops there). */
  mustVerifyEmail: boolean;
  /** Epoch ms of the last skipped enrollment prompt. */
  mfaInitSkippedAt?: number | undefined;
}

/** The person as the sign-in sees them. */
export interface PersonFacts extends UserFacts {
  /** Made without a password and not yet initialized: they set one with a mailed code first. */
  awaitsInitialization?: boolean;
}

export interface SignInFacts {
  /** The person chosen (login name, hint, account, session); undefined: nobody yet. */
  person: PersonFacts | undefined;
  /** A login name was typed that names nobody who may sign in here (ignoreUnknownUsernames lets it reach the password step). */
  unknownLoginNameTyped?: boolean;
  /** The checks passed in this request, or carried from the browser session it would resume. */
  checks: AuthChecks;
  /** The checks are a browser session's: their lifetimes and `max_age` apply. */
  fromSession: boolean;
  /** The session is older than the request's `max_age`. */
  maxAgeExceeded?: boolean;
  /** A device (RFC 8628) is to be allowed. */
  device?: boolean;
  /** A self-registered client asks for more than the person allowed it. */
  consentNeeded?: boolean;
  policy: View<LoginPolicy>;
  now: number;
}

export type SignInStep = 'loginname' | 'init' | 'password' | 'password-change' | 'verify-email' | 'u2f' | 'otp' | 'otp-email' | 'mfa-setup' | 'passkey-setup' | 'device-consent' | 'consent';

interface Check {
  reason: string;
  needed(facts: SignInFacts, person: PersonFacts): boolean;
}

interface StepRule {
  step: SignInStep;
  checks: readonly Check[];
}

/** Whether a check done at `checkedAt` (Unix seconds) still counts under `lifetimeMs` (ZITADEL `checkVerificationTime`). */
export function checkStillValid(checkedAt: number | undefined, lifetimeMs: number, now: number): boolean {
  return checkedAt !== undefined && checkedAt * 1000 + lifetimeMs > now;
}

/** The second factors the login offers to enroll: the policy's that Sesame has. */
export function enrollableFactors(policy: View<LoginPolicy>): string[] {
  return policy.secondFactors.filter((f) => f === OTP_SECOND_FACTOR || f === OTP_EMAIL_SECOND_FACTOR || f === U2F_SECOND_FACTOR);
}

/**
 * The step that checks a person's second factor: a security key when they have one (it cannot be
 * phished; its page offers the others), else TOTP, else a code by email.
 */
export function secondFactorStep(user: UserFacts, policy?: View<LoginPolicy>): 'u2f' | 'otp' | 'otp-email' | undefined {
  // With U2F_WITH_VERIFICATION a passkey is a second factor too (with user verification).
  if (user.hasU2f || (user.hasPasskey && policy?.multiFactors.includes(U2F_WITH_VERIFICATION))) return 'u2f';
  if (user.hasOtp) return 'otp';
  return user.hasOtpEmail ? 'otp-email' : undefined;
}

/** How long an offer to set up a passkey stays away once skipped. */
export const PASSKEY_PROMPT_SKIP_MS = 30 * 24 * 3_600_000;

export type MfaPrompt = 'none' | 'optional' | 'required';

/** Whether the person is asked to enroll a second factor after the password (ZITADEL `mfaChecked` / `mfaSkippedOrSetUp`). */
export function mfaPrompt(user: UserFacts, policy: View<LoginPolicy>, now: number, external = false): MfaPrompt {
  if (secondFactorStep(user, policy) !== undefined || !enrollableFactors(policy).length) return 'none';
  // ZITADEL's RequiresMFA: a local sign-in under either flag; one at an identity provider unless it is local only.
  if (external ? policy.forceMfa && !policy.forceMfaLocalOnly : policy.forceMfa || policy.forceMfaLocalOnly) return 'required';
  // A zero lifetime means the prompt is never shown (as in ZITADEL).
  if (policy.mfaInitSkipLifetimeMs === 0) return 'none';
  if (user.mfaInitSkippedAt !== undefined && user.mfaInitSkippedAt + policy.mfaInitSkipLifetimeMs > now) return 'none';
  return 'optional';
}

/** The first factor was the password. */
const byPassword = (f: SignInFacts) => f.checks.passwordAt !== undefined;
/** The first factor was a sign-in at an identity provider (else the password or a passkey: a local sign-in). */
const external = (f: SignInFacts) => isExternal(f.checks);
/** The first factor was a passkey only. */
const byPasskeyOnly = (f: SignInFacts) => f.checks.passwordlessAt !== undefined && f.checks.passwordAt === undefined && f.checks.idpAt === undefined;

/**
 * The second factor is due: none passed in this request, or the session's is older than its
 * lifetime (`secondFactorCheckLifetime`; a key with user verification: `multiFactorCheckLifetime`).
 * A passkey sign-in is two factors: nothing more is due while it counts.
 */
const secondFactorDue = (f: SignInFacts) => {
  if (f.checks.passwordlessAt !== undefined) return f.fromSession && !checkStillValid(f.checks.passwordlessAt, f.policy.multiFactorCheckLifetimeMs, f.now) && !secondFactorValid(f);
  return f.fromSession ? !secondFactorValid(f) : f.checks.secondFactorAt === undefined;
};
const secondFactorValid = (f: SignInFacts) =>
  checkStillValid(f.checks.secondFactorAt, f.checks.secondFactorKind === 'u2f-uv' ? f.policy.multiFactorCheckLifetimeMs : f.policy.secondFactorCheckLifetimeMs, f.now);

/** The policy once a person is chosen, in the order its steps are asked (before: `loginname`, see nextSignInStep). */
export const SIGN_IN_POLICY: readonly StepRule[] = [
  { step: 'init', checks: [{ reason: 'not_initialized', needed: (_f, p) => p.awaitsInitialization === true }] },
  {
    // The first factor: a password, or a sign-in at an identity provider linked to the person.
    step: 'password',
    checks: [
      { reason: 'no_password_check', needed: (f) => f.checks.passwordAt === undefined && f.checks.idpAt === undefined && f.checks.passwordlessAt === undefined },
      { reason: 'max_age', needed: (f) => f.fromSession && f.maxAgeExceeded === true },
      { reason: 'password_check_expired', needed: (f) => f.fromSession && byPassword(f) && !checkStillValid(f.checks.passwordAt, f.policy.passwordCheckLifetimeMs, f.now) },
      { reason: 'external_login_check_expired', needed: (f) => f.fromSession && external(f) && !checkStillValid(f.checks.idpAt, f.policy.externalLoginCheckLifetimeMs, f.now) },
      // A passkey sign-in is ZITADEL's multi-factor verification: it lasts `multiFactorCheckLifetime`.
      { reason: 'passkey_check_expired', needed: (f) => f.fromSession && byPasskeyOnly(f) && !checkStillValid(f.checks.passwordlessAt, f.policy.multiFactorCheckLifetimeMs, f.now) },
      // A session cannot carry a person who must change their password: they pass the old one again first.
      { reason: 'password_change_pending', needed: (f, p) => f.fromSession && byPassword(f) && p.passwordChangeRequired },
    ],
  },
  { step: 'password-change', checks: [{ reason: 'password_change_required', needed: (f, p) => byPassword(f) && p.passwordChangeRequired }] },
  { step: 'verify-email', checks: [{ reason: 'email_not_verified', needed: (_f, p) => p.mustVerifyEmail }] },
  { step: 'u2f', checks: [{ reason: 'second_factor', needed: (f, p) => secondFactorStep(p, f.policy) === 'u2f' && secondFactorDue(f) }] },
  { step: 'otp', checks: [{ reason: 'second_factor', needed: (f, p) => secondFactorStep(p, f.policy) === 'otp' && secondFactorDue(f) }] },
  { step: 'otp-email', checks: [{ reason: 'second_factor', needed: (f, p) => secondFactorStep(p, f.policy) === 'otp-email' && secondFactorDue(f) }] },
  {
    step: 'mfa-setup',
    checks: [
      { reason: 'mfa_required', needed: (f, p) => f.checks.passwordlessAt === undefined && mfaPrompt(p, f.policy, f.now, external(f)) === 'required' },
      // Offered after a password passed here, not to a session that would otherwise answer at once.
      { reason: 'mfa_offered', needed: (f, p) => !f.fromSession && f.checks.passwordlessAt === undefined && mfaPrompt(p, f.policy, f.now, external(f)) === 'optional' },
    ],
  },
  {
    // passwordlessType ALLOWED: a person who signed in with a password is offered a passkey (skipped: not again for 30 days).
    step: 'passkey-setup',
    checks: [
      {
        reason: 'passkey_offered',
        needed: (f, p) =>
          !f.fromSession && byPassword(f) && passkeysAllowed(f.policy) && !p.hasPasskey && !(p.passkeyPromptSkippedAt !== undefined && p.passkeyPromptSkippedAt + PASSKEY_PROMPT_SKIP_MS > f.now),
      },
    ],
  },
  { step: 'device-consent', checks: [{ reason: 'device', needed: (f) => f.device === true }] },
  { step: 'consent', checks: [{ reason: 'client_consent', needed: (f) => f.consentNeeded === true }] },
];

export interface SignInDecision {
  step: SignInStep | 'done';
  /** Why the step is needed (the check's reason). */
  reason?: string;
}

/** What the sign-in needs next. */
export function nextSignInStep(facts: SignInFacts): SignInDecision {
  const person = facts.person;
  if (!person) {
    // Nobody chosen: a login name, unless one was typed that names nobody (it gets the password step's answer).
    return facts.unknownLoginNameTyped ? { step: 'password', reason: 'unknown_login_name' } : { step: 'loginname', reason: 'no_person' };
  }
  for (const rule of SIGN_IN_POLICY) {
    for (const check of rule.checks) if (check.needed(facts, person)) return { step: rule.step, reason: check.reason };
  }
  return { step: 'done' };
}

/** The facts about a person the policy looks at; `mailCanVerify`: a verification mail can go out (an active SMTP configuration). */
export function factsOf(user: View<UserRecord>, mailCanVerify = false): PersonFacts {
  const h = user.human;
  return {
    hasOtp: h?.otpSecretSealed !== undefined,
    hasOtpEmail: h?.otpEmail === true,
    passwordChangeRequired: h?.passwordChangeRequired === true,
    mustVerifyEmail: mailCanVerify && h !== undefined && !h.email.isEmailVerified && h.email.email !== '',
    mfaInitSkippedAt: h?.mfaInitSkippedAt,
    hasU2f: h?.webauthn?.some((t) => t.kind === 'u2f') === true,
    hasPasskey: h?.webauthn?.some((t) => t.kind === 'passwordless') === true,
    passkeyPromptSkippedAt: h?.passkeyPromptSkippedAt,
    ...(h && !h.passwordHash && user.state === 'USER_STATE_INITIAL' ? { awaitsInitialization: true } : {}),
  };
}

export type NextStep = Exclude<SignInStep, 'loginname' | 'init' | 'password' | 'device-consent' | 'consent'> | 'done';

/**
 * What follows once the password passed in this request, before the sign-in is complete (consent
 * and devices come after it): the policy asked with the checks of this request.
 */
export function nextLoginStep(user: UserFacts, checks: AuthChecks, policy: View<LoginPolicy>, now: number): NextStep {
  const { step } = nextSignInStep({ person: user, checks, fromSession: false, policy, now });
  return step === 'device-consent' || step === 'consent' || step === 'loginname' || step === 'init' || step === 'password' ? 'done' : step;
}

export type SessionRequirement = 'ok' | 'password' | 'u2f' | 'otp' | 'otp-email' | 'mfa-setup';

/**
 * Whether a browser session may answer an authorization without asking anything, and if not,
 * which step does: the policy asked with the session's checks.
 */
export function sessionRequirement(checks: AuthChecks, user: UserFacts, policy: View<LoginPolicy>, now: number, maxAgeExceeded = false): SessionRequirement {
  const { step } = nextSignInStep({ person: user, checks, fromSession: true, maxAgeExceeded, policy, now });
  switch (step) {
    case 'password':
    case 'u2f':
    case 'otp':
    case 'otp-email':
    case 'mfa-setup':
      return step;
    // A session's person was initialized, verified and changed their password when it began; what
    // became due since is asked after a new password check.
    case 'init':
    case 'password-change':
    case 'verify-email':
      return 'password';
    default:
      return 'ok';
  }
}
