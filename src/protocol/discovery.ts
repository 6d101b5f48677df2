import { ENDPOINT_AUTH_METHODS } from './client-auth-methods.js';
import type { SigningAlg } from '../config.js';
import { ASSERTION_ALGS } from './assertion.js';
import { DEVICE_CODE_GRANT } from './device-flow.js';
import { DPOP_ALGS } from './dpop.js';

/**
 * The OpenID Connect Discovery 1.0 document. It lists only what this server does today; a feature
 * joins the document when its endpoint or grant works.
 */
export const PATHS = {
  discovery: '/.well-known/openid-configuration',
  /** RFC 8414's place for the same document: OAuth clients (MCP clients among them) look there first. */
  authorizationServerMetadata: '/.well-known/oauth-authorization-server',
  token: '/oauth/v2/token',
  introspection: '/oauth/v2/introspect',
  revocation: '/oauth/v2/revoke',
  jwks: '/oauth/v2/keys',
  authorization: '/oauth/v2/authorize',
  userinfo: '/oidc/v1/userinfo',
  endSession: '/oidc/v1/end_session',
  deviceAuthorization: '/oauth/v2/device_authorization',
  par: '/oauth/v2/par',
  registration: '/oauth/v2/register',
} as const;

/** Features that can be off, each listed only while on. */
export interface DiscoveredFeatures {
  /** The token exchange grant (the oidcTokenExchange feature). */
  tokenExchange: boolean;
  /** Pushed authorization requests (SESAME_FEATURE_PAR). */
  par: boolean;
  /** JWT introspection answers (SESAME_FEATURE_JWT_INTROSPECTION). */
  jwtIntrospection: boolean;
  /** Dynamic client registration (the instance's dynamic client registration setting). */
  registration: boolean;
  /** DPoP (SESAME_FEATURE_DPOP). */
  dpop: boolean;
}

export function discoveryDocument(issuer: string, signingAlg: SigningAlg, features: DiscoveredFeatures): Record<string, unknown> {
  const { tokenExchange, par, jwtIntrospection, registration, dpop } = features;
  return {
    issuer,
    authorization_endpoint: issuer + PATHS.authorization,
    token_endpoint: issuer + PATHS.token,
    introspection_endpoint: issuer + PATHS.introspection,
    revocation_endpoint: issuer + PATHS.revocation,
    userinfo_endpoint: issuer + PATHS.userinfo,
    end_session_endpoint: issuer + PATHS.endSession,
    device_authorization_endpoint: issuer + PATHS.deviceAuthorization,
    ...(par ? { pushed_authorization_request_endpoint: issuer + PATHS.par, require_pushed_authorization_requests: false } : {}),
    ...(registration ? { registration_endpoint: issuer + PATHS.registration } : {}),
    jwks_uri: issuer + PATHS.jwks,
    scopes_supported: ['openid', 'profile', 'email', 'phone', 'address', 'offline_access'],
    response_types_supported: ['code', 'id_token', 'id_token token'],
    response_modes_supported: ['query', 'fragment', 'form_post'],
    authorization_response_iss_parameter_supported: true,
    code_challenge_methods_supported: ['S256'],
    prompt_values_supported: ['none', 'login', 'select_account', 'create'],
    ui_locales_supported: ['en', 'de'],
    grant_types_supported: [
      'authorization_code',
      'implicit',
      'refresh_token',
      'client_credentials',
      'urn:ietf:params:oauth:grant-type:jwt-bearer',
      DEVICE_CODE_GRANT,
      ...(tokenExchange ? ['urn:ietf:params:oauth:grant-type:token-exchange'] : []),
    ],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [signingAlg],
    token_endpoint_auth_methods_supported: [...ENDPOINT_AUTH_METHODS.token],
    token_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    introspection_endpoint_auth_methods_supported: [...ENDPOINT_AUTH_METHODS.introspection],
    introspection_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    ...(jwtIntrospection ? { introspection_signing_alg_values_supported: [signingAlg] } : {}),
    // RFC 9449 §5.1: listed only while DPoP is on (a server without it ignores the header).
    ...(dpop ? { dpop_signing_alg_values_supported: DPOP_ALGS } : {}),
    revocation_endpoint_auth_methods_supported: [...ENDPOINT_AUTH_METHODS.revocation],
    revocation_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    claims_supported: [
      'sub',
      'aud',
      'exp',
      'iat',
      'iss',
      'jti',
      'client_id',
      'scope',
      'name',
      'given_name',
      'family_name',
      'nickname',
      'gender',
      'locale',
      'preferred_username',
      'updated_at',
      'email',
      'email_verified',
      'phone_number',
      'phone_number_verified',
      'auth_time',
      'nonce',
      'amr',
      'azp',
      'sid',
      'at_hash',
    ],
    // Back-Channel Logout 1.0 §2.1: logout tokens carry `sid` as well as `sub`.
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
  };
}
