import type { AccessTokenClaims } from '../../actors/issued-tokens.js';
import { invalidClient, type AuthenticatedClient } from '../../services/client-auth.js';
import { ENDPOINT_AUTH_METHODS } from '../../protocol/client-auth-methods.js';
import { OAuthError } from '../../protocol/errors.js';
import { PATHS } from '../../protocol/discovery.js';
import { revokeGrant } from '../../services/user-tokens.js';
import { readClientRequest } from '../client-request.js';
import type { FlowView } from '../../services/ports.js';
import type { Request, Route } from '../types.js';
import type { UserTokensPorts } from '../../services/user-tokens.js';

/** What this module uses of the wired parts (src/app.ts). */
export type RevokePorts = Pick<FlowView, 'clientAuth' | 'clients' | 'refreshTokens' | 'accessTokens'> & UserTokensPorts;

/**
 * POST /oauth/v2/revoke (RFC 7009): 200 with an empty JSON response for revoked, unknown or
 * invalid tokens, sent only after the revocation is committed. A client may revoke only its own.
 */
const OK = { status: 200, headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }, body: '' };

function ownsToken(client: AuthenticatedClient, claims: AccessTokenClaims): boolean {
  if (claims.clientId === client.clientId) return true;
  // A machine user's tokens stay its own even if its org's primary domain changed since.
  return client.kind === 'machine' && claims.sub === client.user.id;
}

export function revokeRoute(ctx: RevokePorts): Route {
  const handle = async (req: Request) => {
    const { form, presented } = readClientRequest(req);
    const client = await ctx.clientAuth.authenticate(presented, { methods: ENDPOINT_AUTH_METHODS.revocation, endpoint: PATHS.revocation, apps: true, machineUsers: true });
    const token = form.get('token');
    if (token === undefined) throw new OAuthError('invalid_request', 'token missing');
    let outcome = await ctx.accessTokens.revoke(token, (claims) => ownsToken(client, claims));
    if (outcome === 'unknown') {
      // A refresh token: revoking it ends its grant, including the access tokens issued with it (docs/compatibility.md §5.2).
      const family = await ctx.refreshTokens.find(token);
      if (family) {
        if (family.clientId !== client.clientId) outcome = 'foreign';
        else await revokeGrant(ctx, family.id);
      }
    }
    if (outcome === 'foreign') throw invalidClient(presented, 'token was not issued for this client');
    return OK;
  };
  return { pattern: PATHS.revocation, errorStyle: 'oauth', cors: (origin) => ctx.clients.originAllowed(origin), methods: { POST: handle } };
}
