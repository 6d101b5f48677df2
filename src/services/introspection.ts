import type { FlowView } from './ports.js';
import type { AppRecord } from '../model/records.js';
import { looksLikeJws } from '../protocol/jwt.js';
import { audienceIncludesApp } from '../domain/token-audience.js';
import { claimsFor } from './user-tokens.js';
import type { UserTokensPorts } from './user-tokens.js';
import type { View } from '../util/readonly.js';

/** What this module uses of the wired parts (src/app.ts). */
export type IntrospectionPorts = Pick<FlowView, 'issuer' | 'orgs' | 'accessTokens'> & UserTokensPorts;

/**
 * RFC 7662 introspection: `active` only when the token is Sesame's, unexpired, unrevoked, its
 * user still active, and the calling app is in its audience (by client id or project id).
 */
const INACTIVE = Object.freeze({ active: false });

/**
 * A personal access token's fixed scopes (ZITADEL's AddPersonalAccessToken); at introspection it is
 * treated as if issued for the introspecting app, with every role of that app's project (docs/compatibility.md §5.1).
 */
const PAT_SCOPES = ['openid', 'profile', 'urn:zitadel:iam:user:metadata', 'urn:zitadel:iam:user:resourceowner'];

function introspectPat(token: string, caller: View<AppRecord>, ctx: IntrospectionPorts): Record<string, unknown> | undefined {
  const found = ctx.orgs.authenticatePat(token);
  if (!found) return undefined;
  const { user, pat } = found;
  const roleScopes = (ctx.orgs.getProject(caller.projectId)?.roles ?? []).map((r) => `urn:zitadel:iam:org:project:role:${r.key}`);
  const scopes = [...PAT_SCOPES, ...roleScopes];
  return {
    ...claimsFor(ctx, user, scopes, caller.projectId, true),
    active: true,
    scope: scopes.join(' '),
    token_type: 'Bearer',
    exp: Math.floor(pat.expirationDate / 1000),
    iat: Math.floor(pat.createdAt / 1000),
    nbf: Math.floor(pat.createdAt / 1000),
    aud: [caller.clientId, caller.projectId],
    iss: ctx.issuer,
    jti: pat.id,
    sub: user.id,
    username: ctx.orgs.preferredLoginName(user),
  };
}

export async function introspect(token: string, caller: View<AppRecord>, ctx: IntrospectionPorts): Promise<Record<string, unknown>> {
  const resolved = await ctx.accessTokens.resolve(token);
  // A personal access token is opaque: a JWS that did not resolve is not one (no second lookup). A
  // self-registered client learns nothing of PATs (whose owners it has no relation to).
  if (!resolved) return looksLikeJws(token) || caller.registration ? INACTIVE : (introspectPat(token, caller, ctx) ?? INACTIVE);
  const { claims } = resolved;
  if (!audienceIncludesApp(claims.aud, caller)) return INACTIVE;
  const user = ctx.orgs.getUser(claims.sub);
  if (!ctx.orgs.isActive(user)) return INACTIVE;
  const scopes = claims.scope ? claims.scope.split(' ') : [];
  // docs/compatibility.md §5.1: the scope's profile/email/phone claims (whatever the app's userinfo assertion) and
  // ZITADEL's URN claims, with roles of the *introspecting* app's project (the resource server's).
  const scopeClaims = claimsFor(ctx, user, scopes, caller.projectId, true);
  const answer: Record<string, unknown> = {
    ...scopeClaims,
    active: true,
    scope: claims.scope || undefined,
    client_id: claims.clientId,
    token_type: claims.cnf ? 'DPoP' : 'Bearer',
    exp: claims.exp,
    iat: claims.iat,
    nbf: claims.iat,
    aud: claims.aud,
    iss: ctx.issuer,
    jti: claims.jti,
    sub: claims.sub,
    username: ctx.orgs.preferredLoginName(user),
    ...(claims.authTime !== undefined ? { auth_time: claims.authTime } : {}),
    ...(claims.amr?.length ? { amr: claims.amr } : {}),
    ...(claims.act ? { act: claims.act } : {}),
  };
  // RFC 9449 §6.2: a DPoP-bound token's key, for the resource server to check its proofs against.
  if (claims.cnf) answer.cnf = { jkt: claims.cnf.jkt };
  return answer;
}
