import { tokenResponseBody } from '../protocol/token-response.js';
import type { FlowView } from './ports.js';
import type { ActorClaim } from '../actors/issued-tokens.js';
import { voidedByUsers, type IssuedAccessToken } from './access-tokens.js';
import type { AuthenticatedClient } from './client-auth.js';
import { OAuthError } from '../protocol/errors.js';
import type { DpopKey } from '../protocol/dpop.js';
import { appCredential, type AppRecord, type UserRecord } from '../model/records.js';
import { urnClaims, userClaims } from '../protocol/claims.js';
import { clock } from '../util/clock.js';
import { withoutManagementAudience } from '../domain/management-project.js';
import { actorChainRefusal, appCarriesPowerOf } from './token-power.js';
import { DecidedElsewhere } from '../model/errors.js';
import type { View } from '../util/readonly.js';

/** What this module uses of the wired parts (src/app.ts). */
export type UserTokensPorts = Pick<FlowView, 'clients' | 'config' | 'idTokens' | 'instance' | 'orgs' | 'refreshTokens' | 'issuedTokens' | 'accessTokens' | 'settings'>;

/**
 * Tokens for a signed-in user, shared by the code grant, the refresh grant and the implicit flow:
 * an access token (format per app) bound to the grant and session, and an ID token.
 */
export interface UserGrant {
  grantId: string;
  app: View<AppRecord>;
  user: UserRecord;
  sid: string;
  scopes: readonly string[];
  audience: readonly string[];
  authTime: number;
  amr: readonly string[];
  nonce?: string | undefined;
  /** From a token exchange with an actor: every token of the grant carries it. */
  act?: ActorClaim | undefined;
  /** The access token's audience when it differs from `audience` (resource indicators: userAccessAudience). */
  accessAudience?: readonly string[] | undefined;
  /** Unix seconds no token of the grant may outlive (a family from a token exchange: its subject's expiry). */
  notAfter?: number | undefined;
}

/** ZITADEL's default audience (docs/compatibility.md §3.3): the client, the project's other apps, the project, and `:aud` projects. */
export function userAudience(ctx: UserTokensPorts, app: View<AppRecord>, audienceProjects: readonly string[]): string[] {
  const aud = [app.clientId];
  // Self-registered clients are strangers to the project's other apps (domain/token-audience.ts).
  if (!app.registration) for (const other of ctx.clients.appsOfProject(app.projectId)) if (!other.registration && !aud.includes(other.clientId)) aud.push(other.clientId);
  for (const id of [app.projectId, ...audienceProjects]) if (!aud.includes(id)) aud.push(id);
  // Nor the management API's, even where one was registered into its project before that was refused.
  return [...withoutManagementAudience(aud, () => app.registration === undefined, ctx.instance.managementProjectId)];
}

/** Scope claims for userinfo, the ID token and introspection. */
export function claimsFor(ctx: UserTokensPorts, user: UserRecord, scopes: readonly string[], projectId: string | undefined, withRoles: boolean): Record<string, unknown> {
  return { ...userClaims(user, scopes, ctx.orgs.preferredLoginName(user)), ...zitadelClaimsFor(ctx, user, scopes, projectId, withRoles) };
}

/**
 * Only ZITADEL's URN claims (metadata, resource owner, roles of `projectId` when `withRoles`):
 * what a JWT access token carries (docs/compatibility.md §3.3: no profile/email/phone claims there).
 */
export function zitadelClaimsFor(ctx: UserTokensPorts, user: UserRecord, scopes: readonly string[], projectId: string | undefined, withRoles: boolean): Record<string, unknown> {
  // The orgs actor is the claims directory (orgs, projects, grants, primary domains).
  return urnClaims(ctx.orgs, user, scopes, projectId, withRoles);
}

export interface IssuedUserTokens {
  accessToken?: IssuedAccessToken;
  idToken?: string;
}

export async function issueUserTokens(ctx: UserTokensPorts, grant: UserGrant, want: { accessToken: boolean; idToken: boolean; dpop?: DpopKey | undefined }): Promise<IssuedUserTokens> {
  const oidc = grant.app.oidc!;
  // A code, device code or refresh family from before the user's revocation horizon gives nothing.
  if (voidedByUsers(ctx.orgs, { sub: grant.user.id, act: grant.act, authTime: grant.authTime, iat: grant.authTime })) {
    throw new OAuthError('invalid_grant', "the authorization predates a change of the user's credentials or state");
  }
  // An impersonation's family (token exchange) is refreshed only while its actors may still impersonate the user.
  const refused = grant.act && actorChainRefusal(ctx, grant.user, grant.act);
  if (refused) throw new OAuthError('invalid_grant', refused);
  const skewSeconds = Math.ceil((oidc.clockSkewMs ?? 0) / 1000);
  const lifetimes = cappedLifetimes(appLifetimes(ctx, grant.app), grant.notAfter === undefined ? undefined : grant.notAfter - skewSeconds);
  const out: IssuedUserTokens = {};
  // The last word on the management API's audience, whatever the grant holds (codes and refresh
  // tokens issued earlier, roles given since): only apps that may carry the user's power.
  const carriesPower = () => appCarriesPowerOf(ctx, grant.app, grant.user.id);
  const audience = withoutManagementAudience(grant.audience, carriesPower, ctx.instance.managementProjectId);
  const accessAudience = withoutManagementAudience(grant.accessAudience ?? grant.audience, carriesPower, ctx.instance.managementProjectId);
  if (want.accessToken) {
    const jwt = oidc.accessTokenType === 'OIDC_TOKEN_TYPE_JWT';
    out.accessToken = await ctx.accessTokens.issue(jwt ? 'jwt' : 'opaque', {
      sub: grant.user.id,
      clientId: grant.app.clientId,
      aud: accessAudience,
      scope: grant.scopes.join(' '),
      grantId: grant.grantId,
      sid: grant.sid,
      authTime: grant.authTime,
      amr: grant.amr,
      ...(grant.act ? { act: grant.act } : {}),
      cnf: want.dpop && { jkt: want.dpop.jkt },
      skewSeconds,
      lifetimeSeconds: lifetimes.accessTokenSeconds,
      // Role claims (when requested, as for the ID token) only with accessTokenRoleAssertion.
      ...(jwt ? { jwtClaims: zitadelClaimsFor(ctx, grant.user, grant.scopes, grant.app.projectId, oidc.accessTokenRoleAssertion) } : {}),
    });
  }
  if (want.idToken && grant.scopes.includes('openid')) {
    // With an access token, profile/email/phone/address come from userinfo unless the app asserts them (docs/compatibility.md §3.3).
    const withUserClaims = !want.accessToken || oidc.idTokenUserinfoAssertion;
    const claims = withUserClaims ? claimsFor(ctx, grant.user, grant.scopes, grant.app.projectId, oidc.idTokenRoleAssertion) : {};
    if (!withUserClaims && oidc.idTokenRoleAssertion) Object.assign(claims, claimsFor(ctx, grant.user, ['urn:zitadel:iam:org:projects:roles'], grant.app.projectId, true));
    delete claims.sub;
    out.idToken = await ctx.idTokens.issue({
      sub: grant.user.id,
      clientId: grant.app.clientId,
      aud: audience,
      authTime: grant.authTime,
      amr: grant.amr,
      sid: grant.sid,
      grantId: grant.grantId,
      nonce: grant.nonce,
      accessToken: out.accessToken?.token,
      skewSeconds,
      lifetimeSeconds: lifetimes.idTokenSeconds,
      userClaims: grant.act ? { ...claims, act: grant.act } : claims,
    });
  }
  return out;
}

/**
 * The DPoP key a new refresh token is bound to (RFC 9449 §5): a public client's, when it sent a
 * proof; a confidential client's refresh tokens stay unbound, its authentication protects them.
 */
export function refreshBinding(app: View<AppRecord>, dpop: DpopKey | undefined): { jkt: string } | undefined {
  return dpop && appCredential(app.oidc?.authMethodType ?? '') === 'public' ? { jkt: dpop.jkt } : undefined;
}

/** The token lifetimes an app's tokens get: access and ID tokens in whole seconds, refresh families in ms. */
export interface TokenLifetimes {
  accessTokenSeconds: number;
  idTokenSeconds: number;
  refresh: { idle: number; absolute: number };
}

/**
 * An app's own lifetimes where it has them, never longer than the instance's as configured now:
 * the API refuses longer ones, and an instance lifetime lowered since (a restart with a shorter
 * SESAME_*_LIFETIME) caps them too, since revocations and retired keys are kept only that long.
 */
export function appLifetimes(ctx: Pick<UserTokensPorts, 'config'>, app: View<AppRecord>): TokenLifetimes {
  const own = app.oidc?.lifetimes;
  const { config } = ctx;
  const capped = (appMs: number | undefined, instanceMs: number) => Math.min(appMs ?? instanceMs, instanceMs);
  return {
    accessTokenSeconds: Math.floor(capped(own?.accessToken, config.accessTokenLifetime) / 1000),
    idTokenSeconds: Math.floor(capped(own?.idToken, config.idTokenLifetime) / 1000),
    refresh: { idle: capped(own?.refreshTokenIdle, config.refreshTokenIdleLifetime), absolute: capped(own?.refreshToken, config.refreshTokenLifetime) },
  };
}

/** Lifetimes no longer than up to `notAfter` (Unix seconds; undefined: as they are): nothing made from a token outlives it. */
export function cappedLifetimes(lifetimes: TokenLifetimes, notAfter: number | undefined): TokenLifetimes {
  if (notAfter === undefined) return lifetimes;
  const remaining = Math.max(0, notAfter - clock.seconds());
  return {
    accessTokenSeconds: Math.min(lifetimes.accessTokenSeconds, remaining),
    idTokenSeconds: Math.min(lifetimes.idTokenSeconds, remaining),
    refresh: { idle: lifetimes.refresh.idle, absolute: Math.min(lifetimes.refresh.absolute, remaining * 1000) },
  };
}

/** The OIDC app a user grant is for, which must have `grantType` enabled (else unauthorized_client). */
export function requireUserApp(client: AuthenticatedClient | undefined, grantType: string, name: string): View<AppRecord> {
  if (client?.kind !== 'app' || !client.app.oidc) throw new OAuthError('unauthorized_client', `${name} is for OIDC applications`);
  if (!client.app.oidc.grantTypes.includes(grantType)) throw new OAuthError('unauthorized_client', `grant_type "${name}" not allowed`);
  return client.app;
}

/**
 * Until when a revoked grant or ended session must stay on record (Unix seconds): the longest any
 * token issued from it may still be presented — an access or refresh token issued just now, plus
 * the largest clock skew an app may have (5 s).
 */
export function revocationHorizon(ctx: Pick<UserTokensPorts, 'config'>): number {
  return Math.floor((clock.now() + Math.max(ctx.config.accessTokenLifetime, ctx.config.refreshTokenLifetime)) / 1000) + 5;
}

/**
 * For a single-use credential's redemption (a code, a device code) that the store gave to another
 * use first (DecidedElsewhere): a replay, whose grant is revoked (RFC 6749 §4.1.2) with what this
 * use issued meanwhile, never handed out; other errors pass through.
 */
export function revokeOnReplay(ctx: UserTokensPorts, grantId: string, credential: string): (error: unknown) => Promise<never> {
  return async (error) => {
    if (!(error instanceof DecidedElsewhere)) throw error;
    await revokeGrant(ctx, grantId);
    throw new OAuthError('invalid_grant', `${credential} was already used; the tokens issued with it are revoked`);
  };
}

/** Revokes a grant: its refresh family and every access token issued from it. Resolves once durable. */
export async function revokeGrant(ctx: UserTokensPorts, grantId: string): Promise<void> {
  await Promise.all([ctx.refreshTokens.remove(grantId), ctx.issuedTokens.revokeGrant(grantId, revocationHorizon(ctx))]);
}

export function tokenResponse(tokens: IssuedUserTokens, scopes: readonly string[], refreshToken: string | undefined): Record<string, unknown> {
  const tokenType = tokens.accessToken!.claims.cnf ? 'DPoP' : 'Bearer';
  return tokenResponseBody({ token: tokens.accessToken!.token, tokenType, expiresIn: tokens.accessToken!.expiresIn, scope: scopes.join(' '), idToken: tokens.idToken, refreshToken });
}
