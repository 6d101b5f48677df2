/**
 * The token endpoint's success body (RFC 6749 §5.1, OIDC Core §3.1.3.3, RFC 8693 §2.2.1): one
 * builder for every grant, so every grant answers with the same members in the same way.
 */
export interface TokenResponse {
  /** The access token, or the issued token of a token exchange. */
  token: string;
  /** `Bearer`, `DPoP` for a DPoP-bound one (RFC 9449 §5), or `N_A` for a token exchange that issues something other than an access token. */
  tokenType?: 'Bearer' | 'DPoP' | 'N_A';
  expiresIn: number;
  /** The granted scope, space-separated (left out when empty). */
  scope: string;
  idToken?: string | undefined;
  refreshToken?: string | undefined;
  /** Token exchange only (RFC 8693). */
  issuedTokenType?: string;
}

export function tokenResponseBody(response: TokenResponse): Record<string, unknown> {
  const body: Record<string, unknown> = { access_token: response.token, token_type: response.tokenType ?? 'Bearer', expires_in: response.expiresIn };
  if (response.issuedTokenType !== undefined) body.issued_token_type = response.issuedTokenType;
  if (response.scope) body.scope = response.scope;
  if (response.refreshToken) body.refresh_token = response.refreshToken;
  if (response.idToken) body.id_token = response.idToken;
  return body;
}
