/** The checks a sign-in passed, in Unix seconds (absent: not passed). */
export interface AuthChecks {
  passwordAt?: number | undefined;
  /** A sign-in at an identity provider (`idpId`) linked to the person. */
  idpAt?: number | undefined;
  idpId?: string | undefined;
  secondFactorAt?: number | undefined;
}

/** When the first factor passed: the password, else the identity provider. */
export function firstFactorAt(checks: AuthChecks): number | undefined {
  return checks.passwordAt ?? checks.idpAt;
}

/**
 * OIDC `amr` of the checks passed (compat §3.3, ZITADEL's AuthMethodTypesToAMR): `pwd`, `otp`;
 * a sign-in at an identity provider has no value of its own but counts as a factor; `mfa` for two.
 */
export function amrOf(checks: AuthChecks): string[] {
  const amr: string[] = [];
  let factors = 0;
  if (checks.passwordAt !== undefined) (amr.push('pwd'), factors++);
  if (checks.idpAt !== undefined) factors++;
  if (checks.secondFactorAt !== undefined) (amr.push('otp'), factors++);
  if (factors >= 2) amr.push('mfa');
  return amr;
}
