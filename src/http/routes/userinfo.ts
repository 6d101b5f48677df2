import { bearerToken } from '../../protocol/bearer.js';
import { PATHS } from '../../protocol/discovery.js';
import { OAuthError } from '../../protocol/errors.js';
import { parseFormBody } from '../../protocol/form.js';
import { claimsFor } from '../../services/user-tokens.js';
import type { Ports } from '../../services/ports.js';
import { jsonNoStore } from '../responses.js';
import type { Request, Route } from '../types.js';
import type { UserTokensPorts } from '../../services/user-tokens.js';

/** What this module uses of the wired parts (src/app.ts). */
export type UserinfoPorts = Pick<Ports, 'clients' | 'orgs' | 'accessTokens'> & UserTokensPorts;

/**
 * GET|POST /oidc/v1/userinfo (OIDC Core §5.3, RFC 6750): claims of the token's user per granted
 * scope. A missing token is 401 with a bare Bearer challenge; an invalid, expired or revoked one
 * (or one whose user is gone) 401 with `error="invalid_token"`.
 */
const CHALLENGE = 'Bearer realm="sesame"';

function invalidToken(description: string): OAuthError {
  return new OAuthError('invalid_token', description, {
    status: 401,
    headers: { 'WWW-Authenticate': `${CHALLENGE}, error="invalid_token", error_description="${description}"` },
  });
}

export function userinfoRoute(ctx: UserinfoPorts): Route {
  const handle = (req: Request) => {
    if (req.repeatedHeaders.has('authorization')) throw new OAuthError('invalid_request', 'Authorization header is repeated');
    const header = req.headers.authorization;
    let token: string | undefined;
    if (header !== undefined) {
      token = bearerToken(header);
      if (token === undefined) throw invalidToken('malformed Authorization header');
    }
    // RFC 6750 §2.2: a form body parameter is the other way to send it (only one may be used).
    if (req.method === 'POST' && req.body.length > 0) {
      const bodyToken = parseFormBody(req.headers['content-type'], req.body).get('access_token');
      if (bodyToken !== undefined && token !== undefined) throw new OAuthError('invalid_request', 'access token sent twice');
      token ??= bodyToken;
    }
    if (token === undefined) {
      throw new OAuthError('invalid_request', 'access token missing', { status: 401, headers: { 'WWW-Authenticate': CHALLENGE } });
    }
    const resolved = ctx.accessTokens.resolve(token);
    if (!resolved) throw invalidToken('access token invalid, expired or revoked');
    const user = ctx.orgs.getUser(resolved.claims.sub);
    if (!ctx.orgs.isActive(user)) throw invalidToken('no active user');
    const scopes = resolved.claims.scope ? resolved.claims.scope.split(' ') : [];
    const app = ctx.clients.appByClient(resolved.claims.clientId);
    const claims = claimsFor(ctx, user, scopes, app?.projectId, true);
    return jsonNoStore(200, { ...claims, sub: user.id, ...(resolved.claims.act ? { act: resolved.claims.act } : {}) });
  };
  return { pattern: PATHS.userinfo, errorStyle: 'oauth', cors: (origin) => ctx.clients.originAllowed(origin), methods: { GET: handle, POST: handle } };
}
