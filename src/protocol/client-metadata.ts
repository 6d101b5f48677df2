import { createPublicKey } from 'node:crypto';
import { isInternalHost } from '../util/public-address.js';
import { z } from 'zod';
import { OAuthError } from './errors.js';
import { isLoopbackHttp } from './authorize/redirect-uri.js';
import { algorithmOfKey } from './assertion.js';
import { PRIVATE_MEMBERS } from './dpop.js';
import type { AuthMethod } from './client-auth-methods.js';
import { DEVICE_CODE_GRANT } from './device-flow.js';
import type { RegisteredClientInfo } from '../model/records.js';

/**
 * Client metadata of dynamic registration (RFC 7591 §2, OpenID Connect Registration 1.0 §2) as
 * Sesame takes it: bounded, checked for consistency, and reduced to what Sesame enforces or
 * returns as registered. A known field Sesame cannot honour is refused by name
 * (`invalid_client_metadata`), never stored and ignored; an unknown extension field is ignored
 * (RFC 7591 §2) and not echoed back.
 */
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';

/** The grant types an OIDC app may register. */
const REGISTRABLE_GRANTS = ['authorization_code', 'implicit', 'refresh_token', DEVICE_CODE_GRANT, TOKEN_EXCHANGE_GRANT] as const;
export type RegistrableGrant = (typeof REGISTRABLE_GRANTS)[number];

/** The response types Sesame's authorization endpoint serves (no hybrid flow, no bare `token`). */
const REGISTRABLE_RESPONSE_TYPES = ['code', 'id_token', 'id_token token'] as const;
export type RegistrableResponseType = (typeof REGISTRABLE_RESPONSE_TYPES)[number];

/** Registration 1.0 §2's table: the grant type each response type is issued by. */
const GRANT_OF_RESPONSE: Record<RegistrableResponseType, RegistrableGrant> = {
  code: 'authorization_code',
  id_token: 'implicit',
  'id_token token': 'implicit',
};

/** Bounds: registration may be open to anyone, so what one request may store is small. */
const MAX_URIS = 20;
const MAX_URI_LENGTH = 2000;
const MAX_KEYS = 5;

/** Known metadata Sesame does not support, with why (refused, not ignored). */
const REFUSED: Readonly<Record<string, string>> = {
  jwks_uri: 'jwks_uri is not supported (keys are not fetched); send the public keys inline as jwks',
  software_statement: 'software statements are not supported',
  sector_identifier_uri: 'pairwise subjects are not supported',
  id_token_signed_response_alg: 'per-client ID token algorithms are not supported (the instance signs with one algorithm, see discovery)',
  id_token_encrypted_response_alg: 'encrypted ID tokens are not supported',
  id_token_encrypted_response_enc: 'encrypted ID tokens are not supported',
  userinfo_signed_response_alg: 'signed userinfo responses are not supported',
  userinfo_encrypted_response_alg: 'encrypted userinfo responses are not supported',
  userinfo_encrypted_response_enc: 'encrypted userinfo responses are not supported',
  request_object_signing_alg: 'request objects are not supported',
  request_object_encryption_alg: 'request objects are not supported',
  request_object_encryption_enc: 'request objects are not supported',
  request_uris: 'request objects are not supported',
  token_endpoint_auth_signing_alg: "a per-client assertion algorithm is not supported (any of discovery's token_endpoint_auth_signing_alg_values_supported is accepted)",
  default_max_age: 'default_max_age is not supported',
  require_auth_time: 'require_auth_time is not supported',
  default_acr_values: 'acr values are not supported',
  initiate_login_uri: 'third-party initiated login is not supported',
  frontchannel_logout_uri: 'front-channel logout is not supported (use backchannel_logout_uri)',
  frontchannel_logout_session_required: 'front-channel logout is not supported (use backchannel_logout_uri)',
  tls_client_certificate_bound_access_tokens: 'mutual TLS is not supported',
  authorization_signed_response_alg: 'JWT secured authorization responses are not supported',
  introspection_signed_response_alg: 'per-client introspection answers are not supported',
};

/** Fields that describe the registration itself: a client may not set them (RFC 7592 §2.2). */
const SERVER_FIELDS = ['registration_access_token', 'registration_client_uri', 'client_id_issued_at', 'client_secret_expires_at'];

export function metadataError(description: string): OAuthError {
  return new OAuthError('invalid_client_metadata', description);
}

export function redirectUriError(description: string): OAuthError {
  return new OAuthError('invalid_redirect_uri', description);
}

const boundedText = (max: number) => z.string().trim().min(1).max(max);
const uriList = z.array(z.string().max(MAX_URI_LENGTH)).max(MAX_URIS);

/** A base64url value (Node's decoder would skip other characters and build some other key). */
const base64url = (max: number) =>
  z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, 'must be base64url')
    .max(max);
// Not `.` or `..`: the kid becomes the key's id, a segment of the management API's paths, which clients resolve.
const kid = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,64}$/, 'kid must be 1-64 characters of A-Z a-z 0-9 . _ -')
  .refine((v) => v !== '.' && v !== '..', 'kid must not be "." or ".."');
const use = z.literal('sig').optional();
/** The keys client assertions are checked with (algorithmOfKey): RSA (up to 8192 bits), EC P-256, Ed25519. */
const jwkSchema = z.discriminatedUnion('kty', [
  z.object({ kty: z.literal('RSA'), kid, use, n: base64url(1366), e: base64url(16) }),
  z.object({ kty: z.literal('EC'), kid, use, crv: z.literal('P-256'), x: base64url(100), y: base64url(100) }),
  z.object({ kty: z.literal('OKP'), kid, use, crv: z.literal('Ed25519'), x: base64url(100) }),
]);

const metadataSchema = z.object({
  redirect_uris: uriList.optional(),
  post_logout_redirect_uris: uriList.optional(),
  token_endpoint_auth_method: z.enum(['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt']).optional(),
  grant_types: z.array(z.string().max(200)).max(10).optional(),
  response_types: z.array(z.string().max(200)).max(10).optional(),
  application_type: z.enum(['web', 'native']).optional(),
  client_name: boundedText(200).optional(),
  client_uri: z.string().max(MAX_URI_LENGTH).optional(),
  logo_uri: z.string().max(MAX_URI_LENGTH).optional(),
  policy_uri: z.string().max(MAX_URI_LENGTH).optional(),
  tos_uri: z.string().max(MAX_URI_LENGTH).optional(),
  contacts: z.array(boundedText(320)).max(10).optional(),
  software_id: boundedText(200).optional(),
  software_version: boundedText(200).optional(),
  jwks: z.object({ keys: z.array(z.unknown()).min(1).max(MAX_KEYS) }).optional(),
  backchannel_logout_uri: z.string().max(MAX_URI_LENGTH).optional(),
  // Sesame's logout tokens always carry `sid` (Back-Channel Logout 1.0 §2.4), so only true holds.
  backchannel_logout_session_required: z.literal(true, 'only true: logout tokens always carry sid').optional(),
  require_pushed_authorization_requests: z.boolean().optional(),
  // RFC 9449 §5.2: the client's tokens only with a DPoP proof.
  dpop_bound_access_tokens: z.boolean().optional(),
  // Only `public` exists here: accepted when named, anything else refused.
  subject_type: z.literal('public', 'only public subjects are supported').optional(),
  scope: z.string().trim().min(1).max(2000).optional(),
});

/** A registrant's public key (from `jwks`), checked and in the form app keys store it. */
interface RegisteredKey {
  kid: string;
  publicKeyPem: string;
}

/** The metadata, normalized: defaults applied, consistent, every field one Sesame enforces or returns. */
export interface ClientMetadata {
  redirect_uris: string[];
  post_logout_redirect_uris: string[];
  token_endpoint_auth_method: AuthMethod;
  grant_types: RegistrableGrant[];
  response_types: RegistrableResponseType[];
  application_type: 'web' | 'native';
  /** The registered scope values: what the client's authorization requests may ask for besides openid. */
  scopes?: string[];
  backchannel_logout_uri?: string;
  require_pushed_authorization_requests: boolean;
  dpop_bound_access_tokens: boolean;
  keys: RegisteredKey[];
  info: RegisteredClientInfo;
}

/**
 * A redirect URI only a native app uses (RFC 8252 §7): http on a loopback host, or a private-use
 * scheme. A public client that registers one and no application_type is a native app, as the MCP
 * clients and CLI tools that register themselves are (some add an https redirect beside the
 * loopback one), though Registration 1.0 defaults to web, under which a public client may use
 * neither.
 */
function isNativeRedirect(uri: string): boolean {
  if (isLoopbackHttp(uri)) return true;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri)?.[1]?.toLowerCase();
  return scheme !== undefined && scheme !== 'http' && scheme !== 'https';
}

/**
 * A self-registered client's back-channel logout URI is where Sesame will POST on its own: it must
 * not name a host inside the network Sesame runs in (request forgery). Names are checked again
 * when they are resolved, at each delivery.
 */
function checkLogoutReceiver(uri: string): void {
  const url = URL.canParse(uri) ? new URL(uri) : undefined;
  if (!url) return; // the management API's rules answer a malformed one
  if (isInternalHost(url.hostname)) {
    throw metadataError(`backchannel_logout_uri: ${url.hostname} is not a public host (a registered client's receiver must be reachable on the internet)`);
  }
}

/** A web page about the client (logo, home, policy, terms): an absolute https URL (http on loopback). */
function checkInfoUri(field: string, uri: string): void {
  const url = URL.canParse(uri) ? new URL(uri) : undefined;
  const loopback = isLoopbackHttp(uri);
  if (!url || (url.protocol !== 'https:' && !loopback) || url.username || url.password) {
    throw metadataError(`${field}: "${uri}" must be an absolute https URL`);
  }
}

function publicKeyOf(jwk: unknown, index: number): RegisteredKey {
  // A private key sent by mistake is refused, not trimmed to its public half.
  if (typeof jwk === 'object' && jwk !== null && PRIVATE_MEMBERS.some((part) => part in jwk)) {
    throw metadataError(`jwks.keys[${index}]: private key material must not be sent`);
  }
  const parsed = jwkSchema.safeParse(jwk);
  if (!parsed.success) throw metadataError(`jwks.keys[${index}]: ${parsed.error.issues[0]?.message ?? 'not a public JWK'}`);
  const { kid: id, use: _use, ...material } = parsed.data;
  let key;
  try {
    key = createPublicKey({ key: material, format: 'jwk' });
  } catch {
    throw metadataError(`jwks.keys[${index}] is not a valid public key`);
  }
  // A key its assertions could never be checked with is refused now, not stored to fail every sign-in.
  if (algorithmOfKey(key) === undefined) throw metadataError(`jwks.keys[${index}]: RSA keys must have at least 2048 bits`);
  return { kid: id, publicKeyPem: key.export({ format: 'pem', type: 'spki' }).toString() };
}

/** Response types with their words in any order (`token id_token` is `id_token token`). */
function responseType(value: string): RegistrableResponseType {
  const normalized = value.trim().split(/\s+/).sort().join(' ');
  const match = REGISTRABLE_RESPONSE_TYPES.find((known) => known.split(' ').sort().join(' ') === normalized);
  if (!match) throw metadataError(`response_types: "${value}" is not supported (supported: ${REGISTRABLE_RESPONSE_TYPES.join(', ')})`);
  return match;
}

function grantType(value: string): RegistrableGrant {
  const match = REGISTRABLE_GRANTS.find((known) => known === value);
  if (!match) {
    throw metadataError(`grant_types: "${value}" is not supported for registered clients (supported: ${REGISTRABLE_GRANTS.join(', ')}; client_credentials and jwt-bearer are for machine users)`);
  }
  return match;
}

/** Registration 1.0 §2: each response type needs its grant type, and each redirect-based grant a response type. */
function checkConsistency(grants: readonly RegistrableGrant[], responses: readonly RegistrableResponseType[]): void {
  for (const response of responses) {
    const grant = GRANT_OF_RESPONSE[response];
    if (!grants.includes(grant)) throw metadataError(`response_types "${response}" needs grant_types to include ${grant}`);
  }
  for (const grant of ['authorization_code', 'implicit'] as const) {
    if (grants.includes(grant) && !responses.some((r) => GRANT_OF_RESPONSE[r] === grant)) {
      throw metadataError(`grant_types ${grant} needs a response type that uses it (${grant === 'implicit' ? 'id_token or id_token token' : 'code'})`);
    }
  }
  // As in ZITADEL, an OIDC app has at least one redirect-based flow (a device client too).
  if (responses.length === 0) throw metadataError('grant_types must include authorization_code or implicit (with a response type and a redirect URI)');
  if (grants.includes('refresh_token') && !grants.includes('authorization_code') && !grants.includes(DEVICE_CODE_GRANT)) {
    throw metadataError('grant_types refresh_token needs authorization_code or the device code grant');
  }
}

/**
 * Reads a registration (RFC 7591 §2) or an update (RFC 7592 §2.2) body: the whole metadata,
 * defaults for what is absent. `body` is the parsed JSON.
 */
export function readClientMetadata(body: unknown): ClientMetadata {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw metadataError('the body must be a JSON object');
  const record = body as Record<string, unknown>;
  for (const field of Object.keys(record)) {
    if (Object.hasOwn(REFUSED, field)) throw field === 'software_statement' ? new OAuthError('invalid_software_statement', REFUSED[field]!) : metadataError(REFUSED[field]!);
  }
  for (const field of SERVER_FIELDS) {
    if (field in record) throw metadataError(`${field} is set by the server, not by the client`);
  }
  const parsed = metadataSchema.safeParse(record);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.map(String).join('.') || 'body';
    const error = issue.path[0] === 'redirect_uris' ? redirectUriError : metadataError;
    throw error(`${path}: ${issue.message}`);
  }
  const input = parsed.data;

  const method = input.token_endpoint_auth_method ?? 'client_secret_basic';
  const grants = [...new Set((input.grant_types ?? ['authorization_code']).map(grantType))];
  // RFC 7591 §2: response_types defaults to code; a client without a redirect-based grant has none.
  const defaultResponses: RegistrableResponseType[] = grants.includes('authorization_code') ? ['code'] : [];
  const responses = [...new Set((input.response_types ?? defaultResponses).map(responseType))];
  checkConsistency(grants, responses);

  const redirectUris = [...new Set(input.redirect_uris ?? [])];
  if (responses.length > 0 && redirectUris.length === 0) throw redirectUriError('redirect_uris: at least one is required for redirect-based flows');
  const postLogoutUris = [...new Set(input.post_logout_redirect_uris ?? [])];

  if (input.backchannel_logout_uri !== undefined) checkLogoutReceiver(input.backchannel_logout_uri);

  const info: RegisteredClientInfo = {};
  for (const field of ['client_uri', 'logo_uri', 'policy_uri', 'tos_uri'] as const) {
    const uri = input[field];
    if (uri === undefined) continue;
    checkInfoUri(field, uri);
    info[field] = uri;
  }
  if (input.client_name !== undefined) info.client_name = input.client_name;
  if (input.contacts !== undefined) info.contacts = input.contacts;
  if (input.software_id !== undefined) info.software_id = input.software_id;
  if (input.software_version !== undefined) info.software_version = input.software_version;

  if (method === 'private_key_jwt' && !input.jwks) throw metadataError('private_key_jwt needs jwks with the public keys (jwks_uri is not supported)');
  if (method !== 'private_key_jwt' && input.jwks) throw metadataError('jwks is only used with token_endpoint_auth_method private_key_jwt');
  const keys = (input.jwks?.keys ?? []).map(publicKeyOf);
  if (new Set(keys.map((k) => k.kid)).size !== keys.length) throw metadataError('jwks: each key needs its own kid');

  return {
    redirect_uris: redirectUris,
    post_logout_redirect_uris: postLogoutUris,
    token_endpoint_auth_method: method,
    grant_types: grants,
    response_types: responses,
    application_type: input.application_type ?? (method === 'none' && redirectUris.some(isNativeRedirect) ? 'native' : 'web'),
    ...(input.scope !== undefined ? { scopes: [...new Set(input.scope.split(/\s+/))] } : {}),
    ...(input.backchannel_logout_uri ? { backchannel_logout_uri: input.backchannel_logout_uri } : {}),
    require_pushed_authorization_requests: input.require_pushed_authorization_requests ?? false,
    dpop_bound_access_tokens: input.dpop_bound_access_tokens ?? false,
    keys,
    info,
  };
}
