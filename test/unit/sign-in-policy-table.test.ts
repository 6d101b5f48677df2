import { describe, expect, it } from 'vitest';
import { checkStillValid, factsOf, mfaPrompt, nextLoginStep, sessionRequirement, type UserFacts } from '../../src/domain/sign-in-policy.js';
import type { AuthChecks } from '../../src/model/auth-checks.js';
import { DEFAULT_POLICIES, type LoginPolicy, type UserRecord } from '../../src/model/records.js';

/**
 * Table cases for the pure login rules that test/unit/policy-steps.test.ts leaves open: an
 * optional enrollment prompt after the password and for an existing session, a required password
 * change and a missing password check for a session, TOTP asked whatever the allowed second
 * factors, the lifetime boundaries in whole seconds, and the facts read from a user record.
 */
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 1);
const sec = (ms: number) => Math.floor(ms / 1000);
const policy = (change: Partial<LoginPolicy> = {}): LoginPolicy => ({ ...DEFAULT_POLICIES.login, ...change });
const person = (change: Partial<UserFacts> = {}): UserFacts => ({ hasOtp: false, passwordChangeRequired: false, mustVerifyEmail: false, ...change });
const optionalPrompt = policy({ mfaInitSkipLifetimeMs: 24 * HOUR });

describe('nextLoginStep table', () => {
  const passed: AuthChecks = { passwordAt: sec(T0) };
  it.each<{ name: string; user: UserFacts; checks?: AuthChecks; policy: LoginPolicy; now?: number; step: string }>([
    { name: 'optional prompt, never skipped', user: person(), policy: optionalPrompt, step: 'mfa-setup' },
    { name: 'optional prompt, skipped within the lifetime', user: person({ mfaInitSkippedAt: T0 - 24 * HOUR + 1 }), policy: optionalPrompt, step: 'done' },
    { name: 'optional prompt, skipped exactly a lifetime ago', user: person({ mfaInitSkippedAt: T0 - 24 * HOUR }), policy: optionalPrompt, step: 'mfa-setup' },
    { name: 'forced MFA ignores a recent skip', user: person({ mfaInitSkippedAt: T0 }), policy: policy({ forceMfa: true, mfaInitSkipLifetimeMs: 24 * HOUR }), step: 'mfa-setup' },
    { name: 'forced MFA without TOTP among the second factors', user: person(), policy: policy({ forceMfa: true, secondFactors: [] }), step: 'done' },
    { name: 'TOTP is asked of a person who has it, even if the policy no longer lists it', user: person({ hasOtp: true }), policy: policy({ secondFactors: [] }), step: 'otp' },
    { name: 'codes by email when the person has them and no TOTP', user: person({ hasOtpEmail: true }), policy: policy(), step: 'otp-email' },
    { name: 'TOTP first when the person has both', user: person({ hasOtp: true, hasOtpEmail: true }), policy: policy(), step: 'otp' },
    { name: 'forced MFA with email codes only still enrolls', user: person(), policy: policy({ forceMfa: true, secondFactors: ['SECOND_FACTOR_TYPE_OTP_EMAIL'] }), step: 'mfa-setup' },
    { name: 'an unverified address comes before the second factor', user: person({ hasOtp: true, mustVerifyEmail: true }), policy: policy(), step: 'verify-email' },
    { name: 'a required change comes before the verification', user: person({ mustVerifyEmail: true, passwordChangeRequired: true }), policy: policy(), step: 'password-change' },
    {
      name: 'a required change comes before everything, also after the TOTP code',
      user: person({ hasOtp: true, passwordChangeRequired: true }),
      checks: { ...passed, secondFactorAt: sec(T0) },
      policy: policy({ forceMfa: true }),
      step: 'password-change',
    },
  ])('$name: $step', ({ user, checks, policy: p, now, step }) => {
    expect(nextLoginStep(user, checks ?? passed, p, now ?? T0)).toBe(step);
  });
});

describe('sessionRequirement table', () => {
  const both: AuthChecks = { passwordAt: sec(T0), secondFactorAt: sec(T0) };
  it.each<{ name: string; checks: AuthChecks; user: UserFacts; policy: LoginPolicy; now: number; requirement: string }>([
    { name: 'no password check at all', checks: {}, user: person(), policy: policy(), now: T0, requirement: 'password' },
    { name: 'a required password change', checks: both, user: person({ passwordChangeRequired: true }), policy: policy(), now: T0, requirement: 'password' },
    { name: 'an optional enrollment prompt does not interrupt a session', checks: both, user: person(), policy: optionalPrompt, now: T0, requirement: 'ok' },
    {
      name: 'the password lifetime is checked before the TOTP one',
      checks: both,
      user: person({ hasOtp: true }),
      policy: policy({ passwordCheckLifetimeMs: HOUR, secondFactorCheckLifetimeMs: HOUR }),
      now: T0 + HOUR,
      requirement: 'password',
    },
    {
      name: 'MFA forced later for a person who has TOTP: the code, not enrollment',
      checks: { passwordAt: sec(T0) },
      user: person({ hasOtp: true }),
      policy: policy({ forceMfa: true }),
      now: T0,
      requirement: 'otp',
    },
    { name: 'a TOTP check within its lifetime', checks: both, user: person({ hasOtp: true }), policy: policy(), now: T0 + 18 * HOUR - 1, requirement: 'ok' },
  ])('$name: $requirement', ({ checks, user, policy: p, now, requirement }) => {
    expect(sessionRequirement(checks, user, p, now)).toBe(requirement);
  });
});

describe('checkStillValid boundaries (check times in whole seconds)', () => {
  it.each([
    { name: 'a millisecond before the end', checkedAt: 100, lifetimeMs: 1000, now: 100_999, valid: true },
    { name: 'at the end', checkedAt: 100, lifetimeMs: 1000, now: 101_000, valid: false },
    { name: 'a zero lifetime never counts', checkedAt: 100, lifetimeMs: 0, now: 100_000, valid: false },
    { name: 'a check at second 0 is a check', checkedAt: 0, lifetimeMs: 1000, now: 0, valid: true },
  ])('$name', ({ checkedAt, lifetimeMs, now, valid }) => {
    expect(checkStillValid(checkedAt, lifetimeMs, now)).toBe(valid);
  });
});

describe('mfaPrompt and factsOf', () => {
  it('forceMfaLocalOnly with a recent skip is still required', () => {
    expect(mfaPrompt(person({ mfaInitSkippedAt: T0 }), policy({ forceMfaLocalOnly: true, mfaInitSkipLifetimeMs: HOUR }), T0)).toBe('required');
  });

  const NONE: UserFacts = {
    hasOtp: false,
    hasOtpEmail: false,
    passwordChangeRequired: false,
    mustVerifyEmail: false,
    mfaInitSkippedAt: undefined,
    hasU2f: false,
    hasPasskey: false,
    passkeyPromptSkippedAt: undefined,
  };
  it.each<{ name: string; human: Partial<NonNullable<UserRecord['human']>> | undefined; facts: UserFacts }>([
    { name: 'a machine user (no human part)', human: undefined, facts: { ...NONE } },
    {
      name: 'a person with TOTP, a required change and a skip',
      human: { otpSecretSealed: new Uint8Array([1]), passwordChangeRequired: true, mfaInitSkippedAt: 5 },
      facts: { ...NONE, hasOtp: true, passwordChangeRequired: true, mfaInitSkippedAt: 5 },
    },
    { name: 'a person without any of them', human: {}, facts: { ...NONE } },
    {
      name: 'a person with a passkey and a security key, who skipped the passkey offer',
      human: { webauthn: [{ kind: 'passwordless' }, { kind: 'u2f' }] as never, passkeyPromptSkippedAt: 7 },
      facts: { ...NONE, hasU2f: true, hasPasskey: true, passkeyPromptSkippedAt: 7 },
    },
  ])('factsOf: $name', ({ human, facts }) => {
    const user = { id: 'u', ...(human ? { human } : {}) } as unknown as UserRecord;
    expect(factsOf(user)).toEqual(facts);
  });

  it.each<{ name: string; email: { email: string; isEmailVerified: boolean }; mail: boolean; must: boolean }>([
    { name: 'unverified, mail can go out', email: { email: 'a@example.com', isEmailVerified: false }, mail: true, must: true },
    { name: 'unverified, no relay to send the code', email: { email: 'a@example.com', isEmailVerified: false }, mail: false, must: false },
    { name: 'verified', email: { email: 'a@example.com', isEmailVerified: true }, mail: true, must: false },
    { name: 'no address', email: { email: '', isEmailVerified: false }, mail: true, must: false },
  ])('factsOf, the email verification: $name', ({ email, mail, must }) => {
    const user = { id: 'u', human: { email, passwordChangeRequired: false } } as unknown as UserRecord;
    expect(factsOf(user, mail).mustVerifyEmail).toBe(must);
  });
});
