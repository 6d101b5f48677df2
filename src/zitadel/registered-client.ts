import { createPublicKey } from 'node:crypto';
import type { AppKeyRecord, AppRecord, OidcAppConfig } from '../model/records.js';
import type { ClientMetadata, RegistrableGrant, RegistrableResponseType } from '../protocol/client-metadata.js';
import type { AuthMethod } from '../protocol/client-auth-methods.js';
import { DEVICE_CODE_GRANT } from '../protocol/device-flow.js';
import { TOKEN_EXCHANGE_GRANT } from '../protocol/client-metadata.js';
import { oidcConfigSchema, type OidcConfigInput } from './oidc-config.js';
import type { View } from '../util/readonly.js';

/**
 * RFC 7591 metadata ↔ the OIDC app configuration ZITADEL's management API takes: one table per
 * field, read both ways, so a registered client is an ordinary OIDC app and reads back as registered.
 */
const AUTH_METHOD: Record<AuthMethod, string> = {
  none: 'OIDC_AUTH_METHOD_TYPE_NONE',
  client_secret_basic: 'OIDC_AUTH_METHOD_TYPE_BASIC',
  client_secret_post: 'OIDC_AUTH_METHOD_TYPE_POST',
  private_key_jwt: 'OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT',
};

const GRANT: Record<RegistrableGrant, string> = {
  authorization_code: 'OIDC_GRANT_TYPE_AUTHORIZATION_CODE',
  implicit: 'OIDC_GRANT_TYPE_IMPLICIT',
  refresh_token: 'OIDC_GRANT_TYPE_REFRESH_TOKEN',
  [DEVICE_CODE_GRANT]: 'OIDC_GRANT_TYPE_DEVICE_CODE',
  [TOKEN_EXCHANGE_GRANT]: 'OIDC_GRANT_TYPE_TOKEN_EXCHANGE',
} as Record<RegistrableGrant, string>;

const RESPONSE_TYPE: Record<RegistrableResponseType, string> = {
  code: 'OIDC_RESPONSE_TYPE_CODE',
  id_token: 'OIDC_RESPONSE_TYPE_ID_TOKEN',
  'id_token token': 'OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN',
};

const APP_TYPE = { web: 'OIDC_APP_TYPE_WEB', native: 'OIDC_APP_TYPE_NATIVE' } as const;

function inverse<K extends string>(table: Record<K, string>): Map<string, K> {
  return new Map(Object.entries(table).map(([rfc, zitadel]) => [zitadel as string, rfc as K]));
}
const AUTH_METHOD_OF = inverse(AUTH_METHOD);
const GRANT_OF = inverse(GRANT);
const RESPONSE_TYPE_OF = inverse(RESPONSE_TYPE);
const APP_TYPE_OF = inverse(APP_TYPE);

/**
 * The management API's input for the metadata: on `current` (the app's settings as the management
 * API shows them, for an RFC 7592 update: what an administrator set beyond the metadata, such as
 * lifetimes or the token type, stays), else on AddOIDCApp's defaults (never dev mode).
 */
export function oidcConfigInputOf(metadata: ClientMetadata, current: Record<string, unknown> = {}): OidcConfigInput {
  return oidcConfigSchema.parse({
    ...current,
    redirectUris: metadata.redirect_uris,
    postLogoutRedirectUris: metadata.post_logout_redirect_uris,
    responseTypes: metadata.response_types.map((r) => RESPONSE_TYPE[r]),
    grantTypes: metadata.grant_types.map((g) => GRANT[g]),
    appType: APP_TYPE[metadata.application_type],
    authMethodType: AUTH_METHOD[metadata.token_endpoint_auth_method],
    version: 'OIDC_VERSION_1_0',
    backChannelLogoutUri: metadata.backchannel_logout_uri ?? '',
    requirePushedAuthorizationRequests: metadata.require_pushed_authorization_requests,
    dpopBoundAccessTokens: metadata.dpop_bound_access_tokens,
  });
}

/** The RFC 7591 token endpoint auth method of an app's configuration. */
function authMethodOf(config: View<OidcAppConfig>): AuthMethod | undefined {
  return AUTH_METHOD_OF.get(config.authMethodType);
}

/** A registered public key as a JWK (`kid` = the app key's id, which assertions name). */
function jwkOf(key: View<AppKeyRecord>): Record<string, unknown> {
  return { ...createPublicKey(key.publicKeyPem).export({ format: 'jwk' }), kid: key.id, use: 'sig' };
}

/** The client's metadata as registered (RFC 7591 §3.2.1), without credentials. */
export function registeredMetadataOf(app: View<AppRecord>, keys: readonly View<AppKeyRecord>[]): Record<string, unknown> {
  const config = app.oidc!;
  const method = authMethodOf(config);
  return {
    ...app.registration?.metadata,
    redirect_uris: config.redirectUris,
    post_logout_redirect_uris: config.postLogoutRedirectUris,
    token_endpoint_auth_method: method,
    grant_types: config.grantTypes.map((g) => GRANT_OF.get(g)).filter((g) => g !== undefined),
    response_types: config.responseTypes.map((r) => RESPONSE_TYPE_OF.get(r)).filter((r) => r !== undefined),
    application_type: APP_TYPE_OF.get(config.appType) ?? 'web',
    ...(app.registration?.scopes ? { scope: app.registration.scopes.join(' ') } : {}),
    ...(config.backChannelLogoutUri ? { backchannel_logout_uri: config.backChannelLogoutUri, backchannel_logout_session_required: true } : {}),
    ...(config.requirePushedAuthorizationRequests ? { require_pushed_authorization_requests: true } : {}),
    ...(config.dpopBoundAccessTokens ? { dpop_bound_access_tokens: true } : {}),
    ...(method === 'private_key_jwt' ? { jwks: { keys: keys.map(jwkOf) } } : {}),
  };
}
