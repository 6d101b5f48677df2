/** The checks a sign-in passed, in Unix seconds (absent: not passed). */
export interface AuthChecks {
  passwordAt?: number | undefined;
  secondFactorAt?: number | undefined;
}

/** OIDC `amr` of the checks passed (compat §3.3: `pwd`, `otp`, and `mfa` for two factors). */
export function amrOf(checks: AuthChecks): string[] {
  const amr: string[] = [];
  if (checks.passwordAt !== undefined) amr.push('pwd');
  if (checks.secondFactorAt !== undefined) amr.push('otp');
  if (amr.length === 2) amr.push('mfa');
  return amr;
}
