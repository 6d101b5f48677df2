import type { AuthChecks } from '../model/auth-checks.js';
import { OTP_EMAIL_SECOND_FACTOR, OTP_SECOND_FACTOR, type LoginPolicy, type UserRecord } from '../model/records.js';
import type { View } from '../util/readonly.js';

/**
 * The login policy's rules as pure functions of the facts and the time (ZITADEL's
 * `nextSteps` / `firstFactorChecked` / `mfaChecked` in internal/auth/repository/…/auth_request.go):
 * which step follows a passed password, whether TOTP enrollment is offered or required, and
 * whether an existing browser session may still answer an authorization without a new check.
 * Times: `now` in epoch milliseconds, check times in Unix seconds (as `auth_time`).
 */
export interface UserFacts {
  hasOtp: boolean;
  /** One-time codes by email are the person's second factor. */
  hasOtpEmail?: boolean;
  passwordChangeRequired: boolean;
  /** The address is not verified and a verification can be mailed (ZITADEL's login stops there). */
  mustVerifyEmail: boolean;
  /** Epoch ms of the last skipped enrollment prompt. */
  mfaInitSkippedAt?: number | undefined;
}

export type MfaPrompt = 'none' | 'optional' | 'required';

/** Whether the person is asked to enroll a second factor after the password (ZITADEL `mfaChecked` / `mfaSkippedOrSetUp`). */
export function mfaPrompt(user: UserFacts, policy: View<LoginPolicy>, now: number): MfaPrompt {
  if (user.hasOtp || user.hasOtpEmail || !enrollableFactors(policy).length) return 'none';
  if (policy.forceMfa || policy.forceMfaLocalOnly) return 'required';
  // A zero lifetime means the prompt is never shown (as in ZITADEL).
  if (policy.mfaInitSkipLifetimeMs === 0) return 'none';
  if (user.mfaInitSkippedAt !== undefined && user.mfaInitSkippedAt + policy.mfaInitSkipLifetimeMs > now) return 'none';
  return 'optional';
}

export type NextStep = 'password-change' | 'verify-email' | 'otp' | 'otp-email' | 'mfa-setup' | 'done';

/** The second factors the login offers to enroll: the policy's that Sesame has. */
export function enrollableFactors(policy: View<LoginPolicy>): string[] {
  return policy.secondFactors.filter((f) => f === OTP_SECOND_FACTOR || f === OTP_EMAIL_SECOND_FACTOR);
}

/** The step that checks a person's second factor: TOTP when they have it, else a code by email. */
export function secondFactorStep(user: UserFacts): 'otp' | 'otp-email' | undefined {
  if (user.hasOtp) return 'otp';
  return user.hasOtpEmail ? 'otp-email' : undefined;
}

/**
 * What follows once the password passed: a required password change first, then the email
 * verification, then the TOTP code (a person who has TOTP is always asked for it), then
 * enrollment when it is due.
 */
export function nextLoginStep(user: UserFacts, checks: AuthChecks, policy: View<LoginPolicy>, now: number): NextStep {
  if (user.passwordChangeRequired) return 'password-change';
  if (user.mustVerifyEmail) return 'verify-email';
  const factor = secondFactorStep(user);
  if (factor) return checks.secondFactorAt === undefined ? factor : 'done';
  return mfaPrompt(user, policy, now) === 'none' ? 'done' : 'mfa-setup';
}

/** The facts about a person these rules look at; `mailCanVerify`: a verification mail can go out (an active SMTP configuration). */
export function factsOf(user: UserRecord, mailCanVerify = false): UserFacts {
  return {
    hasOtp: user.human?.otpSecretSealed !== undefined,
    hasOtpEmail: user.human?.otpEmail === true,
    passwordChangeRequired: user.human?.passwordChangeRequired === true,
    mustVerifyEmail: mailCanVerify && user.human !== undefined && !user.human.email.isEmailVerified && user.human.email.email !== '',
    mfaInitSkippedAt: user.human?.mfaInitSkippedAt,
  };
}

export type SessionRequirement = 'ok' | 'password' | 'otp' | 'otp-email' | 'mfa-setup';

/** Whether a check done at `checkedAt` (Unix seconds) still counts under `lifetimeMs` (ZITADEL `checkVerificationTime`). */
export function checkStillValid(checkedAt: number | undefined, lifetimeMs: number, now: number): boolean {
  return checkedAt !== undefined && checkedAt * 1000 + lifetimeMs > now;
}

/**
 * Whether a browser session may answer an authorization without asking anything, and if not,
 * which step does: the password after `passwordCheckLifetime`, the TOTP code after
 * `secondFactorCheckLifetime`, enrollment when MFA became required after the session began.
 */
export function sessionRequirement(checks: AuthChecks, user: UserFacts, policy: View<LoginPolicy>, now: number): SessionRequirement {
  if (!checkStillValid(checks.passwordAt, policy.passwordCheckLifetimeMs, now)) return 'password';
  if (user.passwordChangeRequired) return 'password';
  const factor = secondFactorStep(user);
  if (factor) return checkStillValid(checks.secondFactorAt, policy.secondFactorCheckLifetimeMs, now) ? 'ok' : factor;
  return mfaPrompt(user, policy, now) === 'required' ? 'mfa-setup' : 'ok';
}
