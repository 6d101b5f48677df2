/**
 * The one OAuth error type. Protocol code throws it; src/http/errors.ts turns it into the
 * `{"error","error_description"}` response with the right status and headers.
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'unsupported_token_type'
  | 'access_denied'
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token'
  | 'unsupported_response_type'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'interaction_required'
  | 'login_required'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce'
  | 'server_error'
  | 'temporarily_unavailable'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'invalid_software_statement'
  | 'unapproved_software_statement';

const DEFAULT_STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  invalid_target: 400,
  unsupported_token_type: 400,
  access_denied: 403,
  // RFC 8628 §3.5: errors of a device's poll, all 400 as token endpoint errors are (RFC 6749 §5.2).
  authorization_pending: 400,
  slow_down: 400,
  expired_token: 400,
  // Authorization request errors, as the pushed authorization request endpoint answers them (RFC 9126 §2.3).
  unsupported_response_type: 400,
  request_not_supported: 400,
  request_uri_not_supported: 400,
  interaction_required: 400,
  login_required: 400,
  invalid_token: 401,
  // RFC 6750 §3.1: a valid token without the privileges (an initial access token of a user without the role).
  insufficient_scope: 403,
  // RFC 9449 §5 and §8: 400 at the token endpoint; a protected resource answers them 401 with a DPoP challenge.
  invalid_dpop_proof: 400,
  use_dpop_nonce: 400,
  server_error: 500,
  temporarily_unavailable: 503,
  // Dynamic client registration errors (RFC 7591 §3.2.2).
  invalid_redirect_uri: 400,
  invalid_client_metadata: 400,
  invalid_software_statement: 400,
  unapproved_software_statement: 400,
};

export class OAuthError extends Error {
  readonly status: number;
  readonly headers: Record<string, string> | undefined;
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    options: { status?: number; headers?: Record<string, string> } = {},
  ) {
    super(`${error}: ${description}`);
    this.status = options.status ?? DEFAULT_STATUS[error];
    this.headers = options.headers;
  }
}
