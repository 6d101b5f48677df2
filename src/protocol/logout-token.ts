/** The `typ` header (§2.4: explicit typing, so a logout token is never taken for an ID token). */
export const LOGOUT_TOKEN_TYP = 'logout+jwt';

/** The one member of the `events` claim (§2.4). */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/**
 * How long a logout token is valid (seconds). §2.4 recommends a short lifetime ("two minutes or
 * less"); each delivery attempt signs a fresh one, so a retry hours later still carries a valid one.
 */
export const LOGOUT_TOKEN_LIFETIME_SECONDS = 120;

export interface LogoutTokenInput {
  issuer: string;
  /** The app being told: the token's only audience. */
  clientId: string;
  sub: string;
  sid: string;
  /** Unix seconds. */
  iat: number;
  jti: string;
}

/**
 * The claim set (§2.4) of the logout token of OpenID Connect Back-Channel Logout 1.0 (a JWT the
 * provider POSTs to an app's back-channel logout URI when a session the app holds tokens of ends):
 * `iss`, `aud`, `iat`, `exp`, `jti`, `events`, `sub` and `sid` (Sesame sends both, and says so in
 * discovery with `backchannel_logout_session_supported`). Never a `nonce` (§2.4 forbids it, so a
 * logout token cannot pass as an ID token).
 */
export function logoutTokenClaims(input: LogoutTokenInput): Record<string, unknown> {
  return {
    iss: input.issuer,
    aud: input.clientId,
    iat: input.iat,
    exp: input.iat + LOGOUT_TOKEN_LIFETIME_SECONDS,
    jti: input.jti,
    sub: input.sub,
    sid: input.sid,
    events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
  };
}

/** The request body (§2.5): `application/x-www-form-urlencoded` with the one parameter `logout_token`. */
export function logoutRequestBody(token: string): string {
  return new URLSearchParams({ logout_token: token }).toString();
}

/**
 * §2.8: the receiver answers 200 (204 is common too) once it logged the session out; any other
 * status, a redirect included (the provider must not follow it), is a failed delivery.
 */
export function logoutAccepted(status: number): boolean {
  return status >= 200 && status < 300;
}
