import type { ValidatedAuthRequest } from '../../model/authorization.js';
import { appCredential, type AppRecord, type OrgRecord } from '../../model/records.js';
import { OAuthError } from '../errors.js';
import { isPkceValue } from '../pkce.js';
import { REPEATABLE_PARAMS } from '../form.js';
import { parseMaxAge, parsePrompt } from '../prompt.js';
import { chooseResponseMode } from '../response-mode.js';
import type { ResponseMode, ResponseType } from '../../model/authorization.js';
import { audienceProject, beyondRegisteredScope, classifyScope, parseScope } from '../scopes.js';
import { redirectUriAllowed } from './redirect-uri.js';
import type { View } from '../../util/readonly.js';

/**
 * Validation of an authorization request, in the order that decides where an error may go
 * (docs/compatibility.md §6.1; RFC 6749 §4.1.2.1): until client and redirect_uri
 * are known good, errors are shown on Sesame's own page (no open redirect); after that they are
 * sent to the redirect_uri in the response mode, with `state`.
 */
export type AuthorizeErrorCode =
  | 'invalid_request'
  | 'invalid_scope'
  | 'unauthorized_client'
  | 'unsupported_response_type'
  | 'server_error'
  | 'interaction_required'
  | 'login_required'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'invalid_target';

export type Params = ReadonlyMap<string, readonly string[]>;

/** Where errors go once client and redirect_uri are known good, and for which client. */
export interface ErrorTarget {
  clientId: string;
  redirectUri: string;
  responseMode: ResponseMode;
  state: string | undefined;
}

export type AuthorizeValidation =
  | { kind: 'page'; description: string }
  | { kind: 'redirect-error'; target: ErrorTarget; error: AuthorizeErrorCode; description: string }
  | { kind: 'ok'; request: ValidatedAuthRequest };

export interface AuthorizeDirectory {
  /** An active OIDC app by client id. */
  app(clientId: string): View<AppRecord> | undefined;
  /** The project id of an `:aud` scope (`zitadel` → the management project), if it exists. */
  resolveProject(id: string): string | undefined;
  orgById(id: string): View<OrgRecord> | undefined;
  orgByDomain(domain: string): View<OrgRecord> | undefined;
  /**
   * The resources (RFC 8707) of `values` the app may have tokens for; throws `invalid_target`
   * for a malformed, unknown or foreign one.
   */
  resources(values: readonly string[], app: View<AppRecord>): string[];
  /** Whether the app may ask for tokens with this project in their audience (an `:aud` scope). */
  audienceAllowed(projectId: string, app: View<AppRecord>): boolean;
}

const RESPONSE_TYPES: Record<string, { type: ResponseType; registered: string; grant: string }> = {
  code: { type: 'code', registered: 'OIDC_RESPONSE_TYPE_CODE', grant: 'OIDC_GRANT_TYPE_AUTHORIZATION_CODE' },
  id_token: { type: 'id_token', registered: 'OIDC_RESPONSE_TYPE_ID_TOKEN', grant: 'OIDC_GRANT_TYPE_IMPLICIT' },
  'id_token token': { type: 'id_token token', registered: 'OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN', grant: 'OIDC_GRANT_TYPE_IMPLICIT' },
};
/** Response types defined by OAuth/OIDC that Sesame does not serve (hybrid, token alone, none). */
const UNSUPPORTED = new Set(['token', 'none', 'code id_token', 'code token', 'code id_token token']);

/** Normalizes a space-separated value: `id_token  token` and `token id_token` are the same set. */
function normalizeSet(value: string): string {
  const parts = value.split(' ').filter((s) => s.length > 0);
  const order = ['code', 'id_token', 'token', 'none'];
  return [...new Set(parts)].sort((a, b) => order.indexOf(a) - order.indexOf(b)).join(' ');
}

/**
 * Scopes of a user authorization (the authorization endpoint, the device authorization endpoint):
 * unknown ones dropped (ZITADEL), `:aud` projects and the org scope checked.
 */
export function authorizationScopes(
  raw: string,
  dir: Pick<AuthorizeDirectory, 'resolveProject' | 'orgById' | 'orgByDomain' | 'audienceAllowed'>,
  app: View<AppRecord>,
): { scopes: string[]; audienceProjects: string[]; orgId: string | undefined } {
  const scopes: string[] = [];
  const audienceProjects: string[] = [];
  let orgId: string | undefined;
  // A dynamically registered client's `scope` bounds what it may ask for (openid is the protocol's).
  const bound = app.registration?.scopes;
  for (const scope of parseScope(raw)) {
    if (beyondRegisteredScope(bound, scope)) continue;
    const meaning = classifyScope(scope);
    if (meaning.kind === 'audience') {
      const projectId = audienceProject(scope, meaning.projectRef, dir.resolveProject);
      if (!dir.audienceAllowed(projectId, app)) throw new OAuthError('invalid_scope', `this client may not ask for ${scope}`);
      if (!audienceProjects.includes(projectId)) audienceProjects.push(projectId);
      scopes.push(scope);
    } else if (meaning.kind === 'org') {
      if (orgId !== undefined) throw new OAuthError('invalid_scope', 'Only one organization scope may be provided');
      const org = meaning.by === 'id' ? dir.orgById(meaning.value) : dir.orgByDomain(meaning.value);
      if (org?.state !== 'ORG_STATE_ACTIVE') throw new OAuthError('invalid_scope', `organization of scope ${scope} does not exist`);
      orgId = org.id;
      scopes.push(scope);
    } else if (meaning.kind === 'known') {
      scopes.push(scope);
    }
  }
  return { scopes, audienceProjects, orgId };
}

/** An RFC 7638 SHA-256 thumbprint, base64url (RFC 9449 §10). */
const JKT = /^[A-Za-z0-9_-]{43}$/;

/**
 * `pushed`: the parameters came from a pushed authorization request (RFC 9126), so an app that
 * requires those may use them.
 */
export function validateAuthorizeRequest(
  params: Params,
  dir: AuthorizeDirectory,
  /** `pushed`: the request came from /oauth/v2/par; `dpop`: DPoP is on (else `dpop_jkt` is an unknown parameter, ignored). */
  options: { pushed: boolean; dpop?: boolean } = { pushed: false },
): AuthorizeValidation {
  const one = (name: string) => params.get(name)?.[0];
  const repeated = [...params].filter(([name, values]) => values.length > 1 && !REPEATABLE_PARAMS.has(name)).map(([name]) => name);

  const clientId = one('client_id');
  if (clientId === undefined) return { kind: 'page', description: 'The request has no client_id.' };
  if (repeated.includes('client_id')) return { kind: 'page', description: 'The parameter client_id is repeated.' };
  const app = dir.app(clientId);
  if (!app?.oidc) return { kind: 'page', description: 'The application (client_id) is unknown or inactive.' };
  const redirectUri = one('redirect_uri');
  if (redirectUri === undefined) return { kind: 'page', description: 'The request has no redirect_uri.' };
  if (repeated.includes('redirect_uri') || !redirectUriAllowed(app.oidc, redirectUri)) {
    return { kind: 'page', description: 'The redirect_uri is not registered for this application.' };
  }

  const rawResponseType = one('response_type');
  const normalized = rawResponseType === undefined ? undefined : normalizeSet(rawResponseType);
  const known = normalized === undefined ? undefined : RESPONSE_TYPES[normalized];
  const target: ErrorTarget = {
    clientId,
    redirectUri,
    responseMode: chooseResponseMode(one('response_mode'), known?.type),
    state: one('state'),
  };
  const fail = (error: AuthorizeErrorCode, description: string): AuthorizeValidation => ({
    kind: 'redirect-error',
    target,
    error,
    description,
  });

  if (repeated.length > 0) return fail('invalid_request', `parameter ${repeated[0]} is repeated`);
  if (params.has('request')) return fail('request_not_supported', 'request objects are not supported');
  if (params.has('request_uri')) return fail('request_uri_not_supported', "request_uri is supported only as a pushed authorization request's, not in one");
  if (app.oidc.requirePushedAuthorizationRequests && !options.pushed) {
    return fail('invalid_request', 'this application must push its authorization requests first (RFC 9126, the pushed_authorization_request_endpoint)');
  }
  if (normalized === undefined) return fail('invalid_request', 'response_type missing');
  if (!known) {
    return UNSUPPORTED.has(normalized)
      ? fail('unsupported_response_type', `response_type ${rawResponseType} is not supported`)
      : fail('invalid_request', `response_type ${rawResponseType} is invalid`);
  }
  if (!app.oidc.responseTypes.includes(known.registered) || !app.oidc.grantTypes.includes(known.grant)) {
    return fail('unauthorized_client', `the application is not allowed to use response_type ${known.type}`);
  }
  // An app whose tokens must be DPoP-bound gets none from the authorization endpoint (no proof there).
  if (app.oidc.dpopBoundAccessTokens && known.type === 'id_token token') {
    return fail('unauthorized_client', "the application's access tokens must be DPoP-bound, which the implicit flow cannot do");
  }

  try {
    const rawScope = one('scope');
    if (rawScope === undefined) return fail('invalid_request', 'scope missing');
    const { scopes, audienceProjects, orgId } = authorizationScopes(rawScope, dir, app);
    if (!scopes.includes('openid')) return fail('invalid_scope', 'scope must include openid');
    const prompt = parsePrompt(one('prompt'));
    const maxAge = parseMaxAge(one('max_age'));

    const challenge = one('code_challenge');
    const method = one('code_challenge_method');
    if (method !== undefined && challenge === undefined) return fail('invalid_request', 'code_challenge_method sent without code_challenge');
    if (challenge !== undefined) {
      if ((method ?? 'plain') !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256');
      if (!isPkceValue(challenge)) return fail('invalid_request', 'code_challenge is malformed');
      if (known.type !== 'code') return fail('invalid_request', 'code_challenge is only for response_type code');
    }
    if (known.type === 'code' && appCredential(app.oidc.authMethodType) === 'public' && challenge === undefined) {
      return fail('invalid_request', 'code_challenge required for clients without authentication (PKCE)');
    }
    const nonce = one('nonce');
    if (known.type !== 'code' && nonce === undefined) return fail('invalid_request', 'nonce required for the implicit flow');
    const resources = dir.resources(params.get('resource') ?? [], app);
    const dpopJkt = options.dpop ? one('dpop_jkt') : undefined;
    if (dpopJkt !== undefined) {
      if (!JKT.test(dpopJkt)) return fail('invalid_request', 'dpop_jkt must be a base64url SHA-256 JWK thumbprint');
      if (known.type !== 'code') return fail('invalid_request', 'dpop_jkt is only for response_type code');
    }

    return {
      kind: 'ok',
      request: {
        clientId,
        appId: app.id,
        projectId: app.projectId,
        redirectUri,
        responseType: known.type,
        responseMode: target.responseMode,
        scopes,
        audienceProjects,
        orgId,
        state: target.state,
        nonce,
        codeChallenge: challenge,
        ...(dpopJkt !== undefined ? { dpopJkt } : {}),
        prompt,
        // prompt=login forces a fresh authentication, as max_age=0 does (ZITADEL).
        maxAge: prompt.has('login') ? 0 : maxAge,
        loginHint: one('login_hint'),
        idTokenHint: one('id_token_hint'),
        uiLocales: one('ui_locales'),
        ...(resources.length > 0 ? { resources } : {}),
      },
    };
  } catch (error) {
    if (error instanceof OAuthError && (error.error === 'invalid_request' || error.error === 'invalid_scope' || error.error === 'invalid_target')) {
      return fail(error.error, error.description);
    }
    throw error;
  }
}

export type { ValidatedAuthRequest };
