import { tokenResponseBody } from '../../protocol/token-response.js';
import { actorChainRefusal, appCarriesPowerOf, impersonationRefusal } from '../token-power.js';
import { audienceIncludesApp } from '../../domain/token-audience.js';
import { withoutManagementAudience } from '../../domain/management-project.js';
import { grantChain, GRANT_CHAIN_SEPARATOR, SESSION_IN_CHAIN, type ActorClaim } from '../../actors/issued-tokens.js';
import type { FlowView } from '../ports.js';
import { appCredential, type AppRecord, type UserRecord } from '../../model/records.js';
import { newUniqueId } from '../../util/ids.js';
import { ALL_AUTH_METHODS } from '../../protocol/client-auth-methods.js';
import { PATHS } from '../../protocol/discovery.js';
import { OAuthError } from '../../protocol/errors.js';
import type { Form } from '../../protocol/form.js';
import { beyondRegisteredScope, parseScope, STANDARD_SCOPES } from '../../protocol/scopes.js';
import { voidedByUsers } from '../access-tokens.js';
import { grantOfIdToken } from '../id-token.js';
import { appLifetimes, cappedLifetimes, refreshBinding, requireUserApp } from '../user-tokens.js';
import { clientOrgOf, requestedResources, resourceDirectory } from '../resource-targets.js';
import { resourceAudience } from '../../protocol/resource-indicators.js';
import { projectAccessDenied } from '../../protocol/project-access.js';
import type { Grant } from './grant.js';
import type { DpopKey } from '../../protocol/dpop.js';
import { clock } from '../../util/clock.js';
import type { View } from '../../util/readonly.js';

/** What this module uses of the wired parts (src/app.ts). */
export type TokenExchangePorts = Pick<
  FlowView,
  'assertions' | 'clients' | 'config' | 'idTokens' | 'instance' | 'issuedTokens' | 'issuer' | 'orgs' | 'refreshTokens' | 'settings' | 'accessTokens' | 'activity'
>;

/**
 * RFC 8693 token exchange (docs/compatibility.md §4.5): change the scope or audience
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

/**
 * Where a party's token came from, which every token made from it keeps and dies with:
 * the browser session (`sid`: ending it revokes them), when the person authenticated (`auth_time`:
 * the users' revocation horizons are checked against it), the grants it was made from (revoking
 * one revokes them) and its expiry (nothing made from a token outlives it).
 */
interface TokenOrigin {
  sid?: string | undefined;
  authTime: number;
  amr: readonly string[];
  /** Unix seconds. */
  exp: number;
  /** The grant chain (see grantChain), its own id first; empty for tokens without a grant. */
  grants: readonly string[];
}

/** A party of the exchange, from its token: who, for which audiences and scopes, from where. */
interface Party {
  user: View<UserRecord>;
  aud: readonly string[];
  scopes: string[];
  act?: ActorClaim | undefined;
  /** Absent for a subject named by id or assertion (it comes with the actor's). */
  origin?: TokenOrigin;
}

/** How many grants a chain of exchanges may name: each exchange of an exchanged token adds one. */
const MAX_GRANT_CHAIN = 8;

const invalid = (which: 'subject_token' | 'actor_token', why: string) => new OAuthError('invalid_request', `${which} invalid: ${why}`);

/** Resolves an access token or ID token Sesame issued, for this client, of an active user, still valid at its origin. */
async function partyFromToken(ctx: TokenExchangePorts, app: View<AppRecord>, which: 'subject_token' | 'actor_token', token: string, type: string, dpop: DpopKey | undefined): Promise<Party> {
  let party: Omit<Party, 'user'> & { userId: string };
  if (type === TOKEN_TYPE.accessToken) {
    // Resolving checks expiry, revocation (of the token, its grants and session) and the users' horizons.
    const resolved = await ctx.accessTokens.resolve(token);
    if (!resolved) throw invalid(which, 'unknown, expired or revoked access token');
    const c = resolved.claims;
    // A DPoP-bound token is exchanged only by the holder of its key: else a stolen one would come back unbound.
    if (c.cnf && c.cnf.jkt !== dpop?.jkt) throw invalid(which, 'DPoP-bound access token: send a DPoP proof of its key');
    const origin = { sid: c.sid, authTime: c.authTime ?? c.iat, amr: c.amr ?? [], exp: c.exp, grants: c.grantId ? grantChain(c.grantId) : [] };
    party = { userId: c.sub, aud: c.aud, scopes: c.scope ? c.scope.split(' ') : [], act: c.act, origin };
  } else {
    // A public client proves nothing but its client id: an ID token (no proof of possession, often in
    // URLs as an id_token_hint) would become access tokens for whoever found it.
    if (appCredential(app.oidc?.authMethodType ?? '') === 'public') throw invalid(which, 'a public client cannot exchange ID tokens; exchange an access token');
    const claims = ctx.idTokens.verifyHint(token);
    if (!claims || typeof claims.sub !== 'string' || typeof claims.exp !== 'number' || claims.exp * 1000 <= clock.now()) {
      throw invalid(which, 'unknown or expired ID token');
    }
    const aud = Array.isArray(claims.aud) ? claims.aud.filter((a): a is string => typeof a === 'string') : [String(claims.aud)];
    const sid = typeof claims.sid === 'string' ? claims.sid : undefined;
    // An ID token is no credential of its own: it is good only while what it reports is — its
    // session, its grant (and the grants that one came from), the app it was issued to.
    if (sid !== undefined && (await ctx.issuedTokens.isSessionEnded(sid))) throw invalid(which, 'the session of the ID token has ended');
    const grantId = grantOfIdToken(claims.jti);
    if (grantId !== undefined && (await ctx.issuedTokens.isGrantRevoked(grantId))) throw invalid(which, 'the grant of the ID token was revoked');
    const issuedTo = typeof claims.azp === 'string' ? ctx.clients.appByClient(claims.azp) : undefined;
    const machine = ctx.orgs.getUser(claims.sub);
    // A machine user's own ID token (JWT profile) names the user as its client.
    if (!issuedTo && !(machine?.machine && claims.azp === ctx.orgs.preferredLoginName(machine))) throw invalid(which, 'the app the ID token was issued to no longer exists');
    // auth_time was moved back by the app's clock skew; the authentication itself was that much later.
    const skew = Math.ceil((issuedTo?.oidc?.clockSkewMs ?? 0) / 1000);
    const authTime = (typeof claims.auth_time === 'number' ? claims.auth_time : typeof claims.iat === 'number' ? claims.iat : 0) + skew;
    const act = claims.act as ActorClaim | undefined;
    if (voidedByUsers(ctx.orgs, { sub: claims.sub, act, authTime, iat: authTime })) {
      throw invalid(which, "the ID token predates a change of the user's credentials or state");
    }
    const amr = Array.isArray(claims.amr) ? claims.amr.filter((a): a is string => typeof a === 'string') : [];
    party = { userId: claims.sub, aud, scopes: [], act, origin: { sid, authTime, amr, exp: claims.exp, grants: grantId ? grantChain(grantId) : [] } };
  }
  if (!audienceIncludesApp(party.aud, app)) throw invalid(which, 'not issued for this client');
  const user = ctx.orgs.getUser(party.userId);
  if (!ctx.orgs.isActive(user)) throw invalid(which, 'user is not active');
  // An impersonation's token stands only while its actors may still impersonate its subject.
  const refused = actorChainRefusal(ctx, user, party.act);
  if (refused) throw invalid(which, refused);
  return { ...party, user };
}

/** A self-registered client acts for nobody but the person who signed in to it. */
function refuseActingForOthers(app: View<AppRecord>, what: string): void {
  if (app.registration) throw new OAuthError('unauthorized_client', `a self-registered client cannot use ${what}: it may not act for other users`);
}

async function subjectParty(ctx: TokenExchangePorts, app: View<AppRecord>, form: Form, hasActor: boolean, dpop: DpopKey | undefined): Promise<Party> {
  const token = form.get('subject_token');
  const type = form.get('subject_token_type');
  if (token === undefined) throw new OAuthError('invalid_request', 'subject_token missing');
  if (type === undefined) throw new OAuthError('invalid_request', 'subject_token_type missing');
  if (type === TOKEN_TYPE.accessToken || type === TOKEN_TYPE.idToken) return partyFromToken(ctx, app, 'subject_token', token, type, dpop);
  if (type === TOKEN_TYPE.jwt || USER_ID_TYPES.has(type)) {
    refuseActingForOthers(app, `subject_token_type ${type}`);
    if (!hasActor) throw new OAuthError('invalid_request', `subject_token_type ${type} requires an actor_token`);
    const userId = type === TOKEN_TYPE.jwt ? await ctx.assertions.verifySubjectJwt(token, app, (why) => invalid('subject_token', why)) : token;
    const user = ctx.orgs.getUser(userId);
    if (!ctx.orgs.isActive(user)) throw invalid('subject_token', 'user is not active');
    return { user, aud: [], scopes: [] };
  }
  if (type === TOKEN_TYPE.refreshToken) throw new OAuthError('invalid_request', 'refresh tokens cannot be exchanged');
  throw new OAuthError('invalid_request', `subject_token_type ${type} is not supported`);
}

async function actorParty(ctx: TokenExchangePorts, app: View<AppRecord>, form: Form, dpop: DpopKey | undefined): Promise<Party | undefined> {
  const token = form.get('actor_token');
  const type = form.get('actor_token_type');
  if (token === undefined) {
    if (type !== undefined) throw new OAuthError('invalid_request', 'actor_token_type sent without actor_token');
    return undefined;
  }
  // Impersonation is for the instance's own apps: a stranger's client is trusted with no one's identity.
  refuseActingForOthers(app, 'an actor_token');
  if (type === undefined) throw new OAuthError('invalid_request', 'actor_token_type is required with actor_token');
  if (type !== TOKEN_TYPE.accessToken && type !== TOKEN_TYPE.idToken) {
    throw new OAuthError('invalid_request', `actor_token_type ${type} is not supported`);
  }
  return partyFromToken(ctx, app, 'actor_token', token, type, dpop);
}

/** Impersonation needs the security policy and the actor's right to act on the subject (services/token-power.ts). */
function checkImpersonation(ctx: TokenExchangePorts, subject: Party, actor: Party): void {
  const refused = impersonationRefusal(ctx, actor.user.id, subject.user);
  if (refused) throw new OAuthError('invalid_request', refused, { status: 403 });
}

/**
 * What the new tokens keep of the parties' origins: a session (the subject's, else the actor's),
 * the later authentication and the earlier expiry of both tokens, and the grants of both, with the other
 * party's session in the chain (`@<sid>`), so the tokens end when either person signs out.
 */
function originOf(subject: Party, actor: Party | undefined, grantId: string): TokenOrigin & { grantId: string } {
  const origins = [subject.origin, actor?.origin].filter((o): o is TokenOrigin => o !== undefined);
  const sessions = [...new Set(origins.map((o) => o.sid).filter((sid): sid is string => sid !== undefined))];
  // A family without a browser session goes by its grant chain as its sid: that is in the grants already.
  const otherSessions = sessions
    .slice(1)
    .filter((sid) => !sid.includes(GRANT_CHAIN_SEPARATOR))
    .map((sid) => SESSION_IN_CHAIN + sid);
  const ancestors = [...new Set([...origins.flatMap((o) => o.grants), ...otherSessions])];
  if (ancestors.length >= MAX_GRANT_CHAIN) throw new OAuthError('invalid_request', 'the token was exchanged too many times; sign in again');
  return {
    sid: sessions[0],
    // The later authentication: each party's token was checked against its user's horizon just now,
    // so what can void the new tokens is a change from now on, later than either.
    authTime: Math.max(...origins.map((o) => o.authTime)),
    amr: origins[0]!.amr,
    exp: Math.min(...origins.map((o) => o.exp)),
    grants: [grantId, ...ancestors],
    grantId: [grantId, ...ancestors].join(GRANT_CHAIN_SEPARATOR),
  };
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
 * scopes) are checked, against the actor's: the OIDC scopes describe the subject (docs/compatibility.md §4.5).
 */
function grantedScopes(app: View<AppRecord>, form: Form, subject: Party, actor: Party | undefined): string[] {
  const bound = app.registration?.scopes;
  const available = new Set([...subject.scopes, ...(actor?.scopes ?? [])]);
  const requested = form.get('scope');
  if (requested === undefined) {
    const scopes = subject.scopes.length > 0 ? subject.scopes : [...available];
    return scopes.filter((s) => !beyondRegisteredScope(bound, s));
  }
  const asked = parseScope(requested);
  const beyond = asked.filter((s) => beyondRegisteredScope(bound, s));
  if (beyond.length > 0) throw new OAuthError('invalid_scope', `scope beyond what this client registered: ${beyond.join(' ')}`);
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
    const actor = await actorParty(ctx, app, form, dpop);
    const subject = await subjectParty(ctx, app, form, actor !== undefined, dpop);
    if (actor) {
      // The actor's power travels through this app: only an app that may carry it (an instance-wide
      // impersonator acts through the instance's own apps; domain/management-project.ts).
      if (!appCarriesPowerOf(ctx, app, actor.user.id)) {
        throw new OAuthError('invalid_request', "the actor administers beyond this app's organization: impersonate through an app of the instance's management project", { status: 403 });
      }
      checkImpersonation(ctx, subject, actor);
    }
    // The app's project decides who may hold its tokens (role and project checks), as at sign-in and refresh.
    const project = ctx.orgs.getProject(app.projectId);
    const denied = project && projectAccessDenied(project, subject.user, ctx.orgs.grantsOf(subject.user.id));
    if (denied) throw new OAuthError('invalid_grant', denied);

    // The management API's audience only where the app may carry the subject's power, whatever the subject's token held.
    const granted = grantedAudience(ctx, app, form, subject, actor);
    const aud = withoutManagementAudience(granted, () => appCarriesPowerOf(ctx, app, subject.user.id), ctx.instance.managementProjectId);
    if (aud.length === 0 && granted.length > 0) throw new OAuthError('invalid_target', 'this client may not have tokens for the management API');
    const scopes = grantedScopes(app, form, subject, actor);
    const scope = scopes.join(' ');
    // The acting party, with the chain of earlier actors nested inside (RFC 8693 §4.1).
    const act: ActorClaim | undefined = actor ? { iss: ctx.issuer, sub: actor.user.id, ...((subject.act ?? actor.act) ? { act: subject.act ?? actor.act } : {}) } : subject.act;
    const origin = originOf(subject, actor, `TE_${newUniqueId()}`);
    const { grantId, sid, authTime, amr } = origin;
    // Nothing made from a token outlives it (the subject's, and the actor's).
    const lifetimes = cappedLifetimes(appLifetimes(ctx, app), origin.exp);
    const { accessTokenSeconds, idTokenSeconds } = lifetimes;
    const session = sid !== undefined ? { sid } : {};
    // ZITADEL's `user.impersonated`, durable before a token of it is made: none exists without its record.
    if (actor) {
      await ctx.activity.record(
        [{ type: 'user.impersonated', aggregateType: 'user', aggregateId: subject.user.id, resourceOwner: subject.user.orgId, payload: { actorUserId: actor.user.id, clientId: app.clientId } }],
        { userId: actor.user.id, service: 'oidc' },
      );
    }
    let issued: { token: string; tokenType: 'Bearer' | 'DPoP' | 'N_A'; expiresIn: number; idToken?: string };
    if (requestedType === TOKEN_TYPE.idToken) {
      const idToken = await ctx.idTokens.issue({
        sub: subject.user.id,
        clientId: app.clientId,
        aud,
        authTime,
        amr,
        ...session,
        grantId,
        userClaims: act ? { act } : {},
        lifetimeSeconds: idTokenSeconds,
      });
      issued = { token: idToken, tokenType: 'N_A', expiresIn: idTokenSeconds };
    } else {
      const accessToken = await ctx.accessTokens.issue(requestedType === TOKEN_TYPE.jwt ? 'jwt' : 'opaque', {
        sub: subject.user.id,
        clientId: app.clientId,
        aud,
        scope,
        grantId,
        ...session,
        authTime,
        amr,
        ...(act ? { act } : {}),
        cnf: dpop && { jkt: dpop.jkt },
        lifetimeSeconds: accessTokenSeconds,
      });
      issued = { token: accessToken.token, tokenType: dpop ? 'DPoP' : 'Bearer', expiresIn: accessToken.expiresIn };
      if (scopes.includes('openid')) {
        issued.idToken = await ctx.idTokens.issue({
          sub: subject.user.id,
          clientId: app.clientId,
          aud,
          authTime,
          amr,
          ...session,
          grantId,
          accessToken: accessToken.token,
          userClaims: act ? { act } : {},
          lifetimeSeconds: idTokenSeconds,
        });
      }
    }
    const refreshToken =
      scopes.includes('offline_access') && app.oidc!.grantTypes.includes('OIDC_GRANT_TYPE_REFRESH_TOKEN')
        ? await ctx.refreshTokens.create(
            grantId,
            {
              clientId: app.clientId,
              userId: subject.user.id,
              // The subject's session when it has one: ending it ends the family (the refresh grant checks it).
              sid: sid ?? grantId,
              scopes,
              audience: aud,
              authTime,
              amr,
              ...(act ? { act } : {}),
              // Its refreshed tokens keep the ceiling too.
              notAfter: origin.exp,
              ...refreshBinding(app, dpop),
            },
            lifetimes.refresh,
          )
        : undefined;
    return tokenResponseBody({ ...issued, scope, refreshToken, issuedTokenType: requestedType });
  },
};
