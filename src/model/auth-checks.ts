/** The checks a sign-in passed, in Unix seconds (absent: not passed). */
export interface AuthChecks {
  passwordAt?: number | undefined;
  /** A sign-in at an identity provider (`idpId`) linked to the person. */
  idpAt?: number | undefined;
  idpId?: string | undefined;
  /** A passkey with user verification: a first factor that counts as two (ZITADEL's passwordless). */
  passwordlessAt?: number | undefined;
  secondFactorAt?: number | undefined;
  /** What the second factor was: a one-time code (default), a security key, or a key with user verification (a multi factor). */
  secondFactorKind?: SecondFactorKind | undefined;
}

export type SecondFactorKind = 'otp' | 'u2f' | 'u2f-uv';

/** When the first factor passed: the password, else the identity provider, else the passkey. */
export function firstFactorAt(checks: AuthChecks): number | undefined {
  return checks.passwordAt ?? checks.idpAt ?? checks.passwordlessAt;
}

/** The first factor was a sign-in at an identity provider (not a local one: a password or a passkey). */
export function isExternal(checks: AuthChecks): boolean {
  return checks.idpAt !== undefined && checks.passwordAt === undefined && checks.passwordlessAt === undefined;
}

/**
 * OIDC `amr` of the checks passed (docs/compatibility.md §3.3, ZITADEL's AuthMethodTypesToAMR): `pwd`; `otp` for a
 * code; `user` for a passkey (two factors) or a security key; a sign-in at an identity provider has
 * no value of its own but counts as a factor; `mfa` for two factors or more.
 */
export function amrOf(checks: AuthChecks): string[] {
  const amr: string[] = [];
  let factors = 0;
  if (checks.passwordAt !== undefined) amr.push('pwd'), factors++;
  if (checks.idpAt !== undefined) factors++;
  if (checks.passwordlessAt !== undefined) amr.push('user'), (factors += 2);
  if (checks.secondFactorAt !== undefined) {
    const value = (checks.secondFactorKind ?? 'otp') === 'otp' ? 'otp' : 'user';
    if (!amr.includes(value)) amr.push(value);
    factors++;
  }
  if (factors >= 2) amr.push('mfa');
  return amr;
}
