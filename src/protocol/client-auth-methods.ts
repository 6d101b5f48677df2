/**
 * How clients may authenticate at each endpoint (RFC 6749 §2.3, RFC 7523 private_key_jwt): one
 * table, read by client authentication and by discovery, so what is advertised is what works.
 */
export type AuthMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';

/** Every method a client may authenticate with at the token endpoint. */
export const ALL_AUTH_METHODS: ReadonlySet<AuthMethod> = new Set(['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt']);
/** The methods that present a client secret (machine users have nothing else). */
export const SECRET_AUTH_METHODS: ReadonlySet<AuthMethod> = new Set(['client_secret_basic', 'client_secret_post']);

export const ENDPOINT_AUTH_METHODS = {
  token: ALL_AUTH_METHODS,
  /** As ZITADEL (zitadel/oidc): Basic or an assertion; a public client may not introspect. */
  introspection: new Set<AuthMethod>(['client_secret_basic', 'private_key_jwt']) as ReadonlySet<AuthMethod>,
  revocation: ALL_AUTH_METHODS,
  /** RFC 8628 §3.1: as at the token endpoint (a public client names itself with client_id). */
  deviceAuthorization: ALL_AUTH_METHODS,
  /** RFC 9126 §2: as at the token endpoint. */
  par: ALL_AUTH_METHODS,
} as const;
