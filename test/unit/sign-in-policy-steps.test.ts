import { describe, expect, it } from 'vitest';
import { nextSignInStep, SIGN_IN_POLICY, type PersonFacts, type SignInFacts } from '../../src/domain/sign-in-policy.js';
import { DEFAULT_POLICIES, type LoginPolicy } from '../../src/model/records.js';

/**
 * The sign-in policy as one table: for each situation, the step it asks next and why. Every step
 * of the policy and every reason appears at least once (checked at the end), so a rule added
 * without a case here fails.
 */
const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 5, 1);
const sec = (ms: number) => Math.floor(ms / 1000);
const policy = (change: Partial<LoginPolicy> = {}): LoginPolicy => ({ ...DEFAULT_POLICIES.login, ...change });
const person = (change: Partial<PersonFacts> = {}): PersonFacts => ({ hasOtp: false, hasOtpEmail: false, passwordChangeRequired: false, mustVerifyEmail: false, ...change });
const passed = { passwordAt: sec(T0) };
const both = { passwordAt: sec(T0), secondFactorAt: sec(T0) };
const external = { idpAt: sec(T0), idpId: 'idp-1' };
const passkey = { passwordlessAt: sec(T0) };
const facts = (change: Partial<SignInFacts>): SignInFacts => ({ person: person(), checks: passed, fromSession: false, policy: policy(), now: T0, ...change });

const CASES: { name: string; facts: SignInFacts; step: string; reason?: string }[] = [
  { name: 'nobody chosen yet', facts: facts({ person: undefined, checks: {} }), step: 'loginname', reason: 'no_person' },
  {
    name: 'a typed name nobody has (the password step answers it as a wrong password)',
    facts: facts({ person: undefined, unknownLoginNameTyped: true, checks: {} }),
    step: 'password',
    reason: 'unknown_login_name',
  },
  { name: 'a person made without a password', facts: facts({ person: person({ awaitsInitialization: true }), checks: {} }), step: 'init', reason: 'not_initialized' },
  { name: 'a person chosen, no password yet', facts: facts({ checks: {} }), step: 'password', reason: 'no_password_check' },
  { name: 'a session older than max_age', facts: facts({ fromSession: true, checks: both, maxAgeExceeded: true }), step: 'password', reason: 'max_age' },
  { name: 'a session past passwordCheckLifetime', facts: facts({ fromSession: true, checks: passed, now: T0 + 241 * HOUR }), step: 'password', reason: 'password_check_expired' },
  {
    name: 'a session of a person who must change their password',
    facts: facts({ fromSession: true, person: person({ passwordChangeRequired: true }) }),
    step: 'password',
    reason: 'password_change_pending',
  },
  {
    name: 'a required change after the password',
    facts: facts({ person: person({ passwordChangeRequired: true, mustVerifyEmail: true, hasOtp: true }) }),
    step: 'password-change',
    reason: 'password_change_required',
  },
  { name: 'an unverified address before the second factor', facts: facts({ person: person({ mustVerifyEmail: true, hasOtp: true }) }), step: 'verify-email', reason: 'email_not_verified' },
  { name: 'TOTP', facts: facts({ person: person({ hasOtp: true, hasOtpEmail: true }) }), step: 'otp', reason: 'second_factor' },
  { name: 'codes by email', facts: facts({ person: person({ hasOtpEmail: true }) }), step: 'otp-email', reason: 'second_factor' },
  {
    name: "a session's second factor past its lifetime",
    facts: facts({ fromSession: true, person: person({ hasOtp: true }), checks: both, now: T0 + 19 * HOUR }),
    step: 'otp',
    reason: 'second_factor',
  },
  { name: "a session's second factor within its lifetime", facts: facts({ fromSession: true, person: person({ hasOtp: true }), checks: both, now: T0 + 17 * HOUR }), step: 'done' },
  { name: 'forced MFA without a factor', facts: facts({ policy: policy({ forceMfa: true }) }), step: 'mfa-setup', reason: 'mfa_required' },
  { name: 'forced MFA for a session too', facts: facts({ fromSession: true, policy: policy({ forceMfa: true }) }), step: 'mfa-setup', reason: 'mfa_required' },
  { name: 'an enrollment offer after a password', facts: facts({ policy: policy({ mfaInitSkipLifetimeMs: HOUR }) }), step: 'mfa-setup', reason: 'mfa_offered' },
  { name: 'no offer to a session that may answer', facts: facts({ fromSession: true, policy: policy({ mfaInitSkipLifetimeMs: HOUR }) }), step: 'done' },
  { name: 'no offer when no factor is allowed', facts: facts({ policy: policy({ mfaInitSkipLifetimeMs: HOUR, secondFactors: [] }) }), step: 'done' },
  { name: 'a device to allow', facts: facts({ device: true, consentNeeded: true }), step: 'device-consent', reason: 'device' },
  { name: 'a self-registered client asking for more', facts: facts({ consentNeeded: true }), step: 'consent', reason: 'client_consent' },
  { name: 'the second factor comes before consent', facts: facts({ consentNeeded: true, person: person({ hasOtp: true }) }), step: 'otp', reason: 'second_factor' },
  { name: 'everything passed', facts: facts({ checks: both, person: person({ hasOtp: true }) }), step: 'done' },
  // A sign-in at an identity provider is the first factor.
  { name: 'signed in at an identity provider', facts: facts({ checks: external }), step: 'done' },
  { name: 'a session past externalLoginCheckLifetime', facts: facts({ fromSession: true, checks: external, now: T0 + 241 * HOUR }), step: 'password', reason: 'external_login_check_expired' },
  {
    name: "an identity provider's session within its lifetime, past the password's",
    facts: facts({ fromSession: true, checks: external, now: T0 + 200 * HOUR, policy: policy({ passwordCheckLifetimeMs: HOUR }) }),
    step: 'done',
  },
  { name: 'a person who must change their password, signed in at an identity provider', facts: facts({ checks: external, person: person({ passwordChangeRequired: true }) }), step: 'done' },
  { name: "the person's second factor after an identity provider", facts: facts({ checks: external, person: person({ hasOtp: true }) }), step: 'otp', reason: 'second_factor' },
  { name: 'forced MFA for local sign-ins only: not after an identity provider', facts: facts({ checks: external, policy: policy({ forceMfa: true, forceMfaLocalOnly: true }) }), step: 'done' },
  { name: 'forced MFA for local sign-ins only: after a password', facts: facts({ policy: policy({ forceMfa: true, forceMfaLocalOnly: true }) }), step: 'mfa-setup', reason: 'mfa_required' },
  { name: 'forced MFA: after an identity provider too', facts: facts({ checks: external, policy: policy({ forceMfa: true }) }), step: 'mfa-setup', reason: 'mfa_required' },
  // Passkeys and security keys.
  { name: 'a security key before TOTP', facts: facts({ person: person({ hasU2f: true, hasOtp: true }) }), step: 'u2f', reason: 'second_factor' },
  {
    name: 'a passkey as the second factor with U2F_WITH_VERIFICATION',
    facts: facts({ person: person({ hasPasskey: true }), policy: policy({ multiFactors: ['MULTI_FACTOR_TYPE_U2F_WITH_VERIFICATION'], forceMfa: true }) }),
    step: 'u2f',
    reason: 'second_factor',
  },
  { name: 'a passkey is no second factor without U2F_WITH_VERIFICATION', facts: facts({ person: person({ hasPasskey: true }) }), step: 'done' },
  { name: 'a passkey is two factors: nothing more is asked', facts: facts({ checks: passkey, person: person({ hasU2f: true, hasOtp: true }), policy: policy({ forceMfa: true }) }), step: 'done' },
  { name: 'a passkey session past multiFactorCheckLifetime', facts: facts({ fromSession: true, checks: passkey, now: T0 + 13 * HOUR }), step: 'password', reason: 'passkey_check_expired' },
  { name: 'a passkey session within multiFactorCheckLifetime', facts: facts({ fromSession: true, checks: passkey, now: T0 + 11 * HOUR }), step: 'done' },
  { name: 'a passkey offered after a password', facts: facts({ policy: policy({ passwordlessType: 'PASSWORDLESS_TYPE_ALLOWED' }) }), step: 'passkey-setup', reason: 'passkey_offered' },
  { name: 'no passkey offered to who has one', facts: facts({ person: person({ hasPasskey: true }), policy: policy({ passwordlessType: 'PASSWORDLESS_TYPE_ALLOWED' }) }), step: 'done' },
  {
    name: 'no passkey offered within 30 days of a skip',
    facts: facts({ person: person({ passkeyPromptSkippedAt: T0 - HOUR }), policy: policy({ passwordlessType: 'PASSWORDLESS_TYPE_ALLOWED' }) }),
    step: 'done',
  },
  {
    name: 'a security key with user verification lasts multiFactorCheckLifetime',
    facts: facts({ fromSession: true, person: person({ hasU2f: true }), checks: { passwordAt: sec(T0), secondFactorAt: sec(T0), secondFactorKind: 'u2f-uv' }, now: T0 + 13 * HOUR }),
    step: 'u2f',
    reason: 'second_factor',
  },
];

describe('the sign-in policy', () => {
  it.each(CASES)('$name: $step', ({ facts: f, step, reason }) => {
    const decision = nextSignInStep(f);
    expect(decision.step).toBe(step);
    expect(decision.reason).toBe(reason);
  });

  it('every step and every reason of the policy has a case', () => {
    const covered = new Set(CASES.map((c) => `${c.step}/${c.reason}`));
    for (const rule of SIGN_IN_POLICY) for (const check of rule.checks) expect(covered, `${rule.step}/${check.reason}`).toContain(`${rule.step}/${check.reason}`);
  });
});
