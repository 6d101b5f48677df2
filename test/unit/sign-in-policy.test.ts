import { describe, expect, it } from 'vitest';
import { checkStillValid, mfaPrompt, nextLoginStep, sessionRequirement, type UserFacts } from '../../src/domain/sign-in-policy.js';
import { amrOf } from '../../src/model/auth-checks.js';
import { DEFAULT_POLICIES, type LoginPolicy } from '../../src/model/records.js';

/** The login policy's rules with the time given: no waiting for lifetimes to pass. */
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 0, 1);
const policy = (change: Partial<LoginPolicy> = {}): LoginPolicy => ({ ...DEFAULT_POLICIES.login, ...change });
const person = (change: Partial<UserFacts> = {}): UserFacts => ({ hasOtp: false, passwordChangeRequired: false, mustVerifyEmail: false, ...change });
const sec = (ms: number) => Math.floor(ms / 1000);

describe('mfaPrompt', () => {
  it('requires enrollment when MFA is forced and the person has no TOTP', () => {
    expect(mfaPrompt(person(), policy({ forceMfa: true }), T0)).toBe('required');
    expect(mfaPrompt(person(), policy({ forceMfaLocalOnly: true }), T0)).toBe('required');
    expect(mfaPrompt(person({ hasOtp: true }), policy({ forceMfa: true }), T0)).toBe('none');
  });

  it('offers enrollment again once mfaInitSkipLifetime has passed since the skip; never with a zero lifetime', () => {
    const p = policy({ mfaInitSkipLifetimeMs: 24 * HOUR });
    expect(mfaPrompt(person(), p, T0)).toBe('optional');
    const skipped = person({ mfaInitSkippedAt: T0 });
    expect(mfaPrompt(skipped, p, T0 + 24 * HOUR - 1)).toBe('none');
    expect(mfaPrompt(skipped, p, T0 + 24 * HOUR)).toBe('optional');
    expect(mfaPrompt(person(), policy({ mfaInitSkipLifetimeMs: 0 }), T0)).toBe('none');
  });

  it('offers nothing when TOTP is not an allowed second factor', () => {
    expect(mfaPrompt(person(), policy({ secondFactors: [], mfaInitSkipLifetimeMs: HOUR }), T0)).toBe('none');
  });
});

describe('nextLoginStep', () => {
  it('orders a required password change, the TOTP code, then enrollment', () => {
    const passed = { passwordAt: sec(T0) };
    expect(nextLoginStep(person({ passwordChangeRequired: true, hasOtp: true }), passed, policy(), T0)).toBe('password-change');
    expect(nextLoginStep(person({ hasOtp: true }), passed, policy(), T0)).toBe('otp');
    expect(nextLoginStep(person({ hasOtp: true }), { ...passed, secondFactorAt: sec(T0) }, policy(), T0)).toBe('done');
    expect(nextLoginStep(person(), passed, policy({ forceMfa: true }), T0)).toBe('mfa-setup');
    expect(nextLoginStep(person(), passed, policy(), T0)).toBe('done');
  });
});

describe('sessionRequirement', () => {
  const checks = { passwordAt: sec(T0), secondFactorAt: sec(T0) };

  it('asks for the password once passwordCheckLifetime has passed', () => {
    const p = policy({ passwordCheckLifetimeMs: 10 * HOUR });
    expect(sessionRequirement(checks, person(), p, T0 + 10 * HOUR - 1000)).toBe('ok');
    expect(sessionRequirement(checks, person(), p, T0 + 10 * HOUR)).toBe('password');
  });

  it('asks for the TOTP code once secondFactorCheckLifetime has passed', () => {
    const p = policy({ secondFactorCheckLifetimeMs: 2 * HOUR });
    expect(sessionRequirement(checks, person({ hasOtp: true }), p, T0 + HOUR)).toBe('ok');
    expect(sessionRequirement(checks, person({ hasOtp: true }), p, T0 + 2 * HOUR)).toBe('otp');
    expect(sessionRequirement({ passwordAt: sec(T0) }, person({ hasOtp: true }), p, T0)).toBe('otp');
  });

  it('asks for enrollment when MFA became required after the session began', () => {
    expect(sessionRequirement({ passwordAt: sec(T0) }, person(), policy({ forceMfa: true }), T0)).toBe('mfa-setup');
  });

  it('checkStillValid: a missing check never counts', () => {
    expect(checkStillValid(undefined, HOUR, T0)).toBe(false);
  });
});

describe('amrOf', () => {
  it('names the factors passed and adds mfa for two', () => {
    expect(amrOf({ passwordAt: 1 })).toEqual(['pwd']);
    expect(amrOf({ passwordAt: 1, secondFactorAt: 2 })).toEqual(['pwd', 'otp', 'mfa']);
    expect(amrOf({})).toEqual([]);
  });
});
