import type { AppContext } from '../http/context.js';
import type { AppRecord } from '../model/records.js';
import { claimsFor } from './user-tokens.js';

/**
 * RFC 7662 introspection: `active` only when the token is Sesame's, unexpired, unrevoked, its
 * user still active, and the calling app is in its audience (by client id or project id).
 */
const INACTIVE = Object.freeze({ active: false });

export function introspect(token: string, caller: AppRecord, ctx: AppContext): Record<string, unknown> {
  const resolved = ctx.tokens.resolve(token);
  if (!resolved) return INACTIVE;
  const { claims } = resolved;
  if (!claims.aud.includes(caller.clientId) && !claims.aud.includes(caller.projectId)) return INACTIVE;
  const user = ctx.orgs.getUser(claims.sub);
  if (!ctx.orgs.isActive(user)) return INACTIVE;
  const scopes = claims.scope ? claims.scope.split(' ') : [];
  // Compat §5: the scope's profile/email/phone claims (whatever the app's userinfo assertion) and
  // ZITADEL's URN claims, with roles of the *introspecting* app's project (the resource server's).
  const scopeClaims = claimsFor(ctx, user, scopes, caller.projectId, true);
  return {
    ...scopeClaims,
    active: true,
    scope: claims.scope || undefined,
    client_id: claims.clientId,
    token_type: 'Bearer',
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
}
