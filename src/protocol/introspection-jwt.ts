/**
 * JWT responses for token introspection (RFC 9701): what a resource server asks for with its
 * Accept header, and the claim set the signed answer carries. Pure functions.
 */
export const INTROSPECTION_JWT_MEDIA_TYPE = 'application/token-introspection+jwt';
/** The `typ` header (§5: explicit typing, so the answer is never taken for another kind of JWT). */
export const INTROSPECTION_JWT_TYP = 'token-introspection+jwt';

/** Whether an Accept header asks for the JWT answer (§4); parameters and q-values are not weighed. */
export function wantsIntrospectionJwt(accept: string | undefined): boolean {
  // Most callers send none, */* or application/json: one substring test, no split, on the hot path.
  if (accept === undefined || accept.length > 1024 || !accept.toLowerCase().includes(INTROSPECTION_JWT_MEDIA_TYPE)) return false;
  return accept.split(',').some((range) => range.split(';')[0]!.trim().toLowerCase() === INTROSPECTION_JWT_MEDIA_TYPE);
}

/**
 * The claim set (§5): the issuer, the resource server that asked as the audience, when, and the
 * introspection response itself in `token_introspection` (an inactive token's is `{active: false}`).
 */
export function introspectionJwtClaims(input: { issuer: string; clientId: string; iat: number; response: Record<string, unknown> }): Record<string, unknown> {
  return { iss: input.issuer, aud: input.clientId, iat: input.iat, token_introspection: input.response };
}
