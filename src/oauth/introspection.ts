import type { OrgsActor } from '../actors/orgs.js';
import type { AppRecord } from '../model/records.js';
import type { AccessTokens } from './access-tokens.js';
import { userClaims } from './claims.js';

/**
 * RFC 7662 introspection: `active` only when the token is Sesame's, unexpired, unrevoked, its
 * user still active, and the calling app is in its audience (by client id or project id).
 */
const INACTIVE = Object.freeze({ active: false });

export function introspect(
  token: string | undefined,
  caller: AppRecord,
  tokens: AccessTokens,
  orgs: OrgsActor,
  issuer: string,
): Record<string, unknown> {
  if (!token) return INACTIVE;
  const resolved = tokens.resolve(token);
  if (!resolved) return INACTIVE;
  const { claims } = resolved;
  if (!claims.aud.includes(caller.clientId) && !claims.aud.includes(caller.projectId)) return INACTIVE;
  const user = orgs.getUser(claims.sub);
  if (!orgs.isActive(user)) return INACTIVE;
  const scopes = claims.scope ? claims.scope.split(' ') : [];
  const username = orgs.preferredLoginName(user);
  return {
    active: true,
    scope: claims.scope || undefined,
    client_id: claims.clientId,
    token_type: 'Bearer',
    exp: claims.exp,
    iat: claims.iat,
    nbf: claims.iat,
    aud: claims.aud,
    iss: issuer,
    jti: claims.jti,
    sub: claims.sub,
    username,
    ...(claims.authTime !== undefined ? { auth_time: claims.authTime } : {}),
    ...(claims.amr?.length ? { amr: claims.amr } : {}),
    ...(claims.act ? { act: claims.act } : {}),
    ...userClaims(user, scopes, username),
  };
}
