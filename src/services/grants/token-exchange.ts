import { tokenResponseBody } from '../../protocol/token-response.js';
import { hasPermission } from '../../domain/permissions.js';
import { audienceIncludesApp } from '../../domain/token-audience.js';
import { withoutManagementAudience } from '../../domain/management-project.js';
import type { ActorClaim } from '../../actors/issued-tokens.js';
import type { Ports } from '../ports.js';
import type { AppRecord, UserRecord } from '../../model/records.js';
import { newId } from '../../util/ids.js';
import { ALL_AUTH_METHODS } from '../../protocol/client-auth-methods.js';
import { PATHS } from '../../protocol/discovery.js';
import { OAuthError } from '../../protocol/errors.js';
import type { Form } from '../../protocol/form.js';
import { parseScope, STANDARD_SCOPES } from '../../protocol/scopes.js';
import { appLifetimes, refreshBinding, requireUserApp } from '../user-tokens.js';
import { clientOrgOf, requestedResources, resourceDirectory } from '../resource-targets.js';
import { resourceAudience } from '../../protocol/resource-indicators.js';
import type { Grant } from './grant.js';
import type { DpopKey } from '../../protocol/dpop.js';
import { clock } from '../../util/clock.js';
import type { View } from '../../util/readonly.js';

/** What this module uses of the wired parts (src/app.ts). */
export type TokenExchangePorts = Pick<Ports, 'assertions' | 'config' | 'idTokens' | 'instance' | 'issuer' | 'orgs' | 'refreshTokens' | 'settings' | 'accessTokens'>;

/**
 * RFC 8693 token exchange (seed "Token exchange grant", compat §4.5): change the scope or audience
 * of a token (delegation) or, with an actor token, act as another user (impersonation, which needs
 * the instance security policy and an impersonator role, and marks tokens with `act`).
 * Off until the `oidcTokenExchange` feature is enabled.
 */
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const TOKEN_TYPE = {
  accessToken: 'urn:ietf:params:oauth:token-type:access_token',
  refreshToken: 'urn:ietf:params:oauth:token-type:refresh_token',
  idToken: 'urn:ietf:params:oauth:token-type:id_token',
  jwt: 'urn:ietf:params:oauth:token-type:jwt',
} as const;
const USER_ID_TYPES = new Set(['urn:zitadel:params:oauth:token-type:user_id', 'urn:service:params:oauth:token-type:user_id']);

/** A party of the exchange, from its token: who, for which audiences and scopes. */
interface Party {
  user: UserRecord;
  aud: readonly string[];
  scopes: string[];
  act?: ActorClaim | undefined;
}

const invalid = (which: 'subject_token' | 'actor_token', why: string) => new OAuthError('invalid_request', `${which} invalid: ${why}`);

/** Resolves an access token or ID token Sesame issued, for this client, of an active user. */
function partyFromToken(ctx: TokenExchangePorts, app: View<AppRecord>, which: 'subject_token' | 'actor_token', token: string, type: string, dpop: DpopKey | undefined): Party {
  let party: Omit<Party, 'user'> & { userId: string };
  if (type === TOKEN_TYPE.accessToken) {
    const resolved = ctx.accessTokens.resolve(token);
    if (!resolved) throw invalid(which, 'unknown, expired or revoked access token');
    const c = resolved.claims;
    // A DPoP-bound token is exchanged only by the holder of its key: else a stolen one would come back unbound.
    if (c.cnf && c.cnf.jkt !== dpop?.jkt) throw invalid(which, 'DPoP-bound access token: send a DPoP proof of its key');
    party = { userId: c.sub, aud: c.aud, scopes: c.scope ? c.scope.split(' ') : [], act: c.act };
  } else {
    const claims = ctx.idTokens.verifyHint(token);
    if (!claims || typeof claims.sub !== 'string' || typeof claims.exp !== 'number' || claims.exp * 1000 <= clock.now()) {
      throw invalid(which, 'unknown or expired ID token');
    }
    const aud = Array.isArray(claims.aud) ? claims.aud.filter((a): a is string => typeof a === 'string') : [String(claims.aud)];
    party = { userId: claims.sub, aud, scopes: [], act: claims.act as ActorClaim | undefined };
  }
  if (!audienceIncludesApp(party.aud, app)) throw invalid(which, 'not issued for this client');
  const user = ctx.orgs.getUser(party.userId);
  if (!ctx.orgs.isActive(user)) throw invalid(which, 'user is not active');
  return { ...party, user };
}

async function subjectParty(ctx: TokenExchangePorts, app: View<AppRecord>, form: Form, hasActor: boolean, dpop: DpopKey | undefined): Promise<Party> {
  const token = form.get('subject_token');
  const type = form.get('subject_token_type');
  if (token === undefined) throw new OAuthError('invalid_request', 'subject_token missing');
  if (type === undefined) throw new OAuthError('invalid_request', 'subject_token_type missing');
  if (type === TOKEN_TYPE.accessToken || type === TOKEN_TYPE.idToken) return partyFromToken(ctx, app, 'subject_token', token, type, dpop);
  if (type === TOKEN_TYPE.jwt || USER_ID_TYPES.has(type)) {
    if (!hasActor) throw new OAuthError('invalid_request', `subject_token_type ${type} requires an actor_token`);
    const userId =
      type === TOKEN_TYPE.jwt
        ? await ctx.assertions.verifySubjectJwt(token, app, (why) => invalid('subject_token', why))
        : token;
    const user = ctx.orgs.getUser(userId);
    if (!ctx.orgs.isActive(user)) throw invalid('subject_token', 'user is not active');
    return { user, aud: [], scopes: [] };
  }
  if (type === TOKEN_TYPE.refreshToken) throw new OAuthError('invalid_request', 'refresh tokens cannot be exchanged');
  throw new OAuthError('invalid_request', `subject_token_type ${type} is not supported`);
}

function actorParty(ctx: TokenExchangePorts, app: View<AppRecord>, form: Form, dpop: DpopKey | undefined): Party | undefined {
  const token = form.get('actor_token');
  const type = form.get('actor_token_type');
  if (token === undefined) {
    if (type !== undefined) throw new OAuthError('invalid_request', 'actor_token_type sent without actor_token');
    return undefined;
  }
  if (type === undefined) throw new OAuthError('invalid_request', 'actor_token_type is required with actor_token');
  if (type !== TOKEN_TYPE.accessToken && type !== TOKEN_TYPE.idToken) {
    throw new OAuthError('invalid_request', `actor_token_type ${type} is not supported`);
  }
  return partyFromToken(ctx, app, 'actor_token', token, type, dpop);
}

/** Impersonation needs the security policy and an impersonator role on the subject's org. */
function checkImpersonation(ctx: TokenExchangePorts, subject: Party, actor: Party): void {
  if (!ctx.settings.securityPolicy().enableImpersonation) {
    throw new OAuthError('invalid_request', 'impersonation is disabled by the instance security policy', { status: 403 });
  }
  const memberships = ctx.orgs.memberships(actor.user.id);
  // Impersonating someone who administers anything takes the admin impersonator role.
  const permission = ctx.orgs.memberships(subject.user.id).length > 0 ? 'impersonation.admin' : 'impersonation';
  if (!hasPermission(memberships, permission, { orgId: subject.user.orgId })) {
    throw new OAuthError('invalid_request', 'the actor may not impersonate this user', { status: 403 });
  }
}

/**
 * The audience asked for (`audience` values, and `resource` URIs (RFC 8707) with the projects they
 * are registered on), which must lie within the subject's and actor's audiences.
 */
function grantedAudience(ctx: TokenExchangePorts, app: View<AppRecord>, form: Form, subject: Party, actor: Party | undefined): readonly string[] {
  const requested = (form.get('audience') ?? '').split(' ').filter(Boolean);
  const resources = requestedResources(ctx, form.all('resource'));
  // Still registered, on an active project of the client's organization (as at every other grant).
  if (resources.length > 0) resourceAudience(resources, resourceDirectory(ctx), clientOrgOf(ctx, app));
  for (const uri of resources) {
    requested.push(uri);
    const project = ctx.orgs.projectOfResource(uri);
    if (project && subject.aud.includes(project.id)) requested.push(project.id);
  }
  const available = new Set([...subject.aud, ...(actor?.aud ?? [])]);
  if (requested.length === 0) return subject.aud.length > 0 ? subject.aud : [...available];
  const outside = requested.filter((a) => !available.has(a));
  if (outside.length > 0) throw new OAuthError('invalid_target', `audience not within the subject and actor audiences: ${outside.join(' ')}`);
  return [...new Set(requested)];
}

/**
 * Requested scopes must lie within the subject's and actor's. When an actor acts for a subject that
 * carries no scopes (user id, ID token or jwt subject), only authorization scopes (ZITADEL's URN
 * scopes) are checked, against the actor's: the OIDC scopes describe the subject (compat §4.5).
 */
function grantedScopes(form: Form, subject: Party, actor: Party | undefined): string[] {
  const available = new Set([...subject.scopes, ...(actor?.scopes ?? [])]);
  const requested = form.get('scope');
  if (requested === undefined) return subject.scopes.length > 0 ? subject.scopes : [...available];
  const asked = parseScope(requested);
  const impersonatingScopeless = actor !== undefined && subject.scopes.length === 0;
  const outside = asked.filter((s) => !available.has(s) && !(impersonatingScopeless && (STANDARD_SCOPES as readonly string[]).includes(s)));
  if (outside.length > 0) throw new OAuthError('invalid_scope', `scope not within the subject and actor scopes: ${outside.join(' ')}`);
  return asked;
}

export const tokenExchangeGrant: Grant<TokenExchangePorts> = {
  type: TOKEN_EXCHANGE,
  label: 'token_exchange',
  clientPolicy: { methods: ALL_AUTH_METHODS, endpoint: PATHS.token, apps: true, machineUsers: false },
  async handle({ form, client, ctx, dpop }) {
    if (!ctx.settings.tokenExchangeEnabled()) {
      throw new OAuthError('unsupported_grant_type', 'token exchange is not enabled (feature oidcTokenExchange)');
    }
    const app = requireUserApp(client, 'OIDC_GRANT_TYPE_TOKEN_EXCHANGE', 'token-exchange');
    const requestedType = form.get('requested_token_type') ?? TOKEN_TYPE.accessToken;
    if (requestedType !== TOKEN_TYPE.accessToken && requestedType !== TOKEN_TYPE.jwt && requestedType !== TOKEN_TYPE.idToken) {
      throw new OAuthError('invalid_request', `requested_token_type ${requestedType} is not supported`);
    }
    const actor = actorParty(ctx, app, form, dpop);
    const subject = await subjectParty(ctx, app, form, actor !== undefined, dpop);
    if (actor) checkImpersonation(ctx, subject, actor);

    // A registered client's tokens never carry the management API's audience, whatever the subject's held.
    const granted = grantedAudience(ctx, app, form, subject, actor);
    const aud = withoutManagementAudience(granted, app, ctx.instance.managementProjectId);
    if (aud.length === 0 && granted.length > 0) throw new OAuthError('invalid_target', 'this client may not have tokens for the management API');
    const scopes = grantedScopes(form, subject, actor);
    const scope = scopes.join(' ');
    // The acting party, with the chain of earlier actors nested inside (RFC 8693 §4.1).
    const act: ActorClaim | undefined = actor
      ? { iss: ctx.issuer, sub: actor.user.id, ...((subject.act ?? actor.act) ? { act: subject.act ?? actor.act } : {}) }
      : subject.act;
    const grantId = `TE_${newId()}`;
    const authTime = clock.seconds();
    const lifetimes = appLifetimes(ctx, app);
    let issued: { token: string; tokenType: 'Bearer' | 'DPoP' | 'N_A'; expiresIn: number; idToken?: string };
    if (requestedType === TOKEN_TYPE.idToken) {
      const idToken = await ctx.idTokens.issue({ sub: subject.user.id, clientId: app.clientId, aud, authTime, amr: [], userClaims: act ? { act } : {}, lifetimeSeconds: lifetimes.idTokenSeconds });
      issued = { token: idToken, tokenType: 'N_A', expiresIn: lifetimes.idTokenSeconds };
    } else {
      const accessToken = await ctx.accessTokens.issue(requestedType === TOKEN_TYPE.jwt ? 'jwt' : 'opaque', {
        sub: subject.user.id,
        clientId: app.clientId,
        aud,
        scope,
        grantId,
        ...(act ? { act } : {}),
        cnf: dpop && { jkt: dpop.jkt },
        lifetimeSeconds: lifetimes.accessTokenSeconds,
      });
      issued = { token: accessToken.token, tokenType: dpop ? 'DPoP' : 'Bearer', expiresIn: accessToken.expiresIn };
      if (scopes.includes('openid')) {
        issued.idToken = await ctx.idTokens.issue({
          sub: subject.user.id,
          clientId: app.clientId,
          aud,
          authTime,
          amr: [],
          accessToken: accessToken.token,
          userClaims: act ? { act } : {},
          lifetimeSeconds: lifetimes.idTokenSeconds,
        });
      }
    }
    const refreshToken =
      scopes.includes('offline_access') && app.oidc!.grantTypes.includes('OIDC_GRANT_TYPE_REFRESH_TOKEN')
        ? await ctx.refreshTokens.create(grantId, {
            clientId: app.clientId,
            userId: subject.user.id,
            sid: grantId,
            scopes,
            audience: aud,
            authTime,
            amr: [],
            ...(act ? { act } : {}),
            ...refreshBinding(app, dpop),
          }, lifetimes.refresh)
        : undefined;
    return tokenResponseBody({ ...issued, scope, refreshToken, issuedTokenType: requestedType });
  },
};
