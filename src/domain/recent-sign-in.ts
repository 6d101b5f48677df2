/**
 * Changing where a person's recovery goes (their email address, their phone number) through the
 * auth API takes a sign-in made moments ago, not only a valid token: a stolen session or token that
 * could set the address would receive the next password reset. The token's `auth_time` says when
 * its person last signed in actively (a password, a passkey, an identity provider); a token of a
 * sign-in where the login asked nothing (single sign-on), or refreshed since, is as old as that
 * sign-in. A token acting for someone (token exchange's `act`) never counts: the actor did not sign in as them.
 */
export const RECENT_SIGN_IN_SECONDS = 5 * 60;
/** The error id of the refusal: a client (the console) answers it with a new sign-in (OIDC `prompt=login`). */
export const SIGN_IN_AGAIN = 'AUTH-R3c3nt';

export interface TokenSignIn {
  /** Unix seconds of the token's sign-in (`auth_time`); absent for PATs and tokens without one. */
  authTime?: number | undefined;
  /** Whether the token acts for its subject (`act`). */
  acting: boolean;
}

export function signedInRecently(token: TokenSignIn | undefined, nowSeconds: number): boolean {
  if (!token || token.acting || token.authTime === undefined) return false;
  return token.authTime <= nowSeconds + 5 && nowSeconds - token.authTime <= RECENT_SIGN_IN_SECONDS;
}
