import { z } from 'zod';
import { DEFAULT_POLICIES, OTP_EMAIL_SECOND_FACTOR, OTP_SECOND_FACTOR as OTP_FACTOR, U2F_SECOND_FACTOR, U2F_WITH_VERIFICATION, type LoginPolicy, type LoginPolicyIdp } from '../model/records.js';
import { formatProtoDuration } from '../util/duration.js';
import { enumField, enumValue } from './enums.js';
import { duration, flag, text } from './validation.js';

/**
 * ZITADEL's login policy (docs/compatibility.md §1.4 `loginPolicy`): one schema for the management API and the
 * import bundle, one rule for what Sesame can enforce. Every field is either enforced by the login
 * UI or refused: the API answers 400 naming it, the import drops it and lists it in the errors.
 */
const PASSWORDLESS_TYPES = ['PASSWORDLESS_TYPE_NOT_ALLOWED', 'PASSWORDLESS_TYPE_ALLOWED'] as const;
const SECOND_FACTOR_TYPES = [
  'SECOND_FACTOR_TYPE_UNSPECIFIED',
  'SECOND_FACTOR_TYPE_OTP',
  'SECOND_FACTOR_TYPE_U2F',
  'SECOND_FACTOR_TYPE_OTP_EMAIL',
  'SECOND_FACTOR_TYPE_OTP_SMS',
  'SECOND_FACTOR_TYPE_RECOVERY_CODES',
] as const;
const MULTI_FACTOR_TYPES = ['MULTI_FACTOR_TYPE_UNSPECIFIED', 'MULTI_FACTOR_TYPE_U2F_WITH_VERIFICATION'] as const;

/** ZITADEL's IDPOwnerType: whose provider a login policy's entry names. */
export const IDP_OWNER_TYPES = ['IDP_OWNER_TYPE_UNSPECIFIED', 'IDP_OWNER_TYPE_SYSTEM', 'IDP_OWNER_TYPE_ORG'] as const;
const idp = z.object({ idpId: z.string().trim().max(200).default(''), ownerType: enumField(IDP_OWNER_TYPES) });

export const loginPolicySchema = z.object({
  allowUsernamePassword: flag(),
  allowRegister: flag(),
  allowExternalIdp: flag(),
  forceMfa: flag(),
  forceMfaLocalOnly: flag(),
  passwordlessType: enumField(PASSWORDLESS_TYPES),
  hidePasswordReset: flag(),
  ignoreUnknownUsernames: flag(),
  allowDomainDiscovery: flag(),
  disableLoginWithEmail: flag(),
  disableLoginWithPhone: flag(),
  defaultRedirectUri: text(2000),
  passwordCheckLifetime: duration().optional(),
  externalLoginCheckLifetime: duration().optional(),
  mfaInitSkipLifetime: duration().optional(),
  secondFactorCheckLifetime: duration().optional(),
  multiFactorCheckLifetime: duration().optional(),
  secondFactors: z.array(enumValue(SECOND_FACTOR_TYPES)).max(10).optional(),
  multiFactors: z.array(enumValue(MULTI_FACTOR_TYPES)).max(10).default([]),
  idps: z.array(idp).max(100).default([]),
});
export type LoginPolicyInput = z.output<typeof loginPolicySchema>;

/** Longest lifetime accepted (ten years): a bound, so sums with timestamps stay exact. */
const MAX_LIFETIME_MS = 10 * 365 * 24 * 3_600_000;

/**
 * The policy Sesame stores for an input, and the parts it cannot enforce (each a sentence naming
 * the field). Unsupported parts are left out of the policy.
 */
export function toLoginPolicy(input: LoginPolicyInput): { policy: LoginPolicy; unsupported: string[] } {
  const unsupported: string[] = [];
  const defaults = DEFAULT_POLICIES.login;
  const lifetime = (name: keyof LoginPolicyInput, fallback: number): number => {
    const ms = input[name] as number | undefined;
    if (ms === undefined) return fallback;
    if (ms < 0 || ms > MAX_LIFETIME_MS) {
      unsupported.push(`${name} must be between 0s and ${MAX_LIFETIME_MS / 1000}s`);
      return fallback;
    }
    return ms;
  };
  const idps: LoginPolicyIdp[] = [];
  for (const entry of input.idps) {
    if (!entry.idpId) unsupported.push('idps: an entry has no idpId');
    else if (entry.ownerType === 'IDP_OWNER_TYPE_UNSPECIFIED') unsupported.push(`idps: ${entry.idpId} needs ownerType IDP_OWNER_TYPE_ORG or IDP_OWNER_TYPE_SYSTEM`);
    else if (!idps.some((i) => i.idpId === entry.idpId)) idps.push({ idpId: entry.idpId, ownerType: entry.ownerType });
  }
  const multiFactors: string[] = [];
  for (const factor of input.multiFactors) {
    if (factor === U2F_WITH_VERIFICATION) {
      if (!multiFactors.includes(factor)) multiFactors.push(factor);
    } else if (factor !== 'MULTI_FACTOR_TYPE_UNSPECIFIED') unsupported.push(`multiFactors: ${factor} is not supported`);
  }
  if (input.allowDomainDiscovery) unsupported.push('allowDomainDiscovery: Sesame has no domain discovery');
  // ZITADEL redirects there after a login without an application (from an email link); every
  // Sesame login starts at an application's authorization request.
  if (input.defaultRedirectUri) unsupported.push('defaultRedirectUri: Sesame has no login without an application to return to');
  const secondFactors: string[] = [];
  for (const factor of input.secondFactors ?? defaults.secondFactors) {
    if (factor === OTP_FACTOR || factor === OTP_EMAIL_SECOND_FACTOR || factor === U2F_SECOND_FACTOR) {
      if (!secondFactors.includes(factor)) secondFactors.push(factor);
    } else if (factor !== 'SECOND_FACTOR_TYPE_UNSPECIFIED') {
      unsupported.push(
        `secondFactors: ${factor} is not supported (Sesame's second factors are TOTP, ${OTP_FACTOR}, codes by email, ${OTP_EMAIL_SECOND_FACTOR}, and security keys, ${U2F_SECOND_FACTOR})`,
      );
    }
  }
  const canEnroll = secondFactors.length > 0;
  if ((input.forceMfa || input.forceMfaLocalOnly) && !canEnroll) {
    unsupported.push(`forceMfa needs ${OTP_FACTOR}, ${OTP_EMAIL_SECOND_FACTOR} or ${U2F_SECOND_FACTOR} among secondFactors: nobody could complete the sign-in`);
  }
  const policy: LoginPolicy = {
    allowUsernamePassword: input.allowUsernamePassword,
    allowRegister: input.allowRegister,
    allowExternalIdp: input.allowExternalIdp,
    // "Force MFA for local logins only" forces it for local logins (ZITADEL's RequiresMFA); a sign-in
    // at an identity provider is then not asked to enroll (domain/sign-in-policy.ts mfaPrompt).
    forceMfa: (input.forceMfa || input.forceMfaLocalOnly) && canEnroll,
    forceMfaLocalOnly: input.forceMfaLocalOnly && canEnroll,
    passwordlessType: input.passwordlessType,
    hidePasswordReset: input.hidePasswordReset,
    ignoreUnknownUsernames: input.ignoreUnknownUsernames,
    allowDomainDiscovery: false,
    disableLoginWithEmail: input.disableLoginWithEmail,
    disableLoginWithPhone: input.disableLoginWithPhone,
    defaultRedirectUri: '',
    passwordCheckLifetimeMs: lifetime('passwordCheckLifetime', defaults.passwordCheckLifetimeMs),
    externalLoginCheckLifetimeMs: lifetime('externalLoginCheckLifetime', defaults.externalLoginCheckLifetimeMs),
    mfaInitSkipLifetimeMs: lifetime('mfaInitSkipLifetime', defaults.mfaInitSkipLifetimeMs),
    secondFactorCheckLifetimeMs: lifetime('secondFactorCheckLifetime', defaults.secondFactorCheckLifetimeMs),
    multiFactorCheckLifetimeMs: lifetime('multiFactorCheckLifetime', defaults.multiFactorCheckLifetimeMs),
    secondFactors,
    multiFactors,
    idps,
  };
  return { policy, unsupported };
}

/** ZITADEL's JSON of a login policy (API output and export): zero values omitted, durations as "Ns". */
export function loginPolicyView(policy: LoginPolicy) {
  const nonZero = <T>(v: T, zero: T) => (v === zero ? undefined : v);
  return {
    allowUsernamePassword: nonZero(policy.allowUsernamePassword, false),
    allowRegister: nonZero(policy.allowRegister, false),
    allowExternalIdp: nonZero(policy.allowExternalIdp, false),
    forceMfa: nonZero(policy.forceMfa, false),
    forceMfaLocalOnly: nonZero(policy.forceMfaLocalOnly, false),
    hidePasswordReset: nonZero(policy.hidePasswordReset, false),
    ignoreUnknownUsernames: nonZero(policy.ignoreUnknownUsernames, false),
    allowDomainDiscovery: nonZero(policy.allowDomainDiscovery, false),
    disableLoginWithEmail: nonZero(policy.disableLoginWithEmail, false),
    disableLoginWithPhone: nonZero(policy.disableLoginWithPhone, false),
    defaultRedirectUri: nonZero(policy.defaultRedirectUri, ''),
    passwordCheckLifetime: formatProtoDuration(policy.passwordCheckLifetimeMs),
    externalLoginCheckLifetime: formatProtoDuration(policy.externalLoginCheckLifetimeMs),
    mfaInitSkipLifetime: formatProtoDuration(policy.mfaInitSkipLifetimeMs),
    secondFactorCheckLifetime: formatProtoDuration(policy.secondFactorCheckLifetimeMs),
    multiFactorCheckLifetime: formatProtoDuration(policy.multiFactorCheckLifetimeMs),
    secondFactors: policy.secondFactors.length > 0 ? policy.secondFactors : undefined,
    passwordlessType: policy.passwordlessType === 'PASSWORDLESS_TYPE_NOT_ALLOWED' ? undefined : policy.passwordlessType,
    multiFactors: policy.multiFactors.length > 0 ? policy.multiFactors : undefined,
    idps: policy.idps?.length ? policy.idps : undefined,
  };
}
