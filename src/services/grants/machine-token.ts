import { tokenResponseBody } from '../../protocol/token-response.js';
import type { FlowView } from '../ports.js';
import type { UserRecord } from '../../model/records.js';
import { grantScopes, parseScope } from '../../protocol/scopes.js';
import { resolveAudienceProject } from '../authorize-directory.js';
import { zitadelClaimsFor } from '../user-tokens.js';
import { resourceAudience } from '../../protocol/resource-indicators.js';
import { requestedResources, resourceDirectory } from '../resource-targets.js';
import type { UserTokensPorts } from '../user-tokens.js';
import { beginningAt } from '../../domain/revocation-horizon.js';
import { clock } from '../../util/clock.js';
import type { DpopKey } from '../../protocol/dpop.js';

/** What this module uses of the wired parts (src/app.ts). */
export type MachineTokenPorts = Pick<FlowView, 'idTokens' | 'instance'> & UserTokensPorts;

/**
 * The token response for a machine user acting as itself (client_credentials, JWT profile grant):
 * ZITADEL's scope rules (docs/compatibility.md §3.2, §4.3), the audience from `:aud` scopes (else the client),
 * the access token format from the user's accessTokenType, and an ID token when `openid` is
 * granted and the grant allows one.
 */
export async function machineUserTokens(
  ctx: MachineTokenPorts,
  user: UserRecord,
  clientId: string,
  requestedScope: string | undefined,
  /** `resources`: the request's `resource` values (RFC 8707), unchecked. */
  options: { dropScopes: ReadonlySet<string>; idToken: boolean; resources: readonly string[]; dpop?: DpopKey | undefined },
): Promise<Record<string, unknown>> {
  const { orgs, accessTokens } = ctx;
  const org = orgs.requireOrg(user.orgId);
  const { scopes, audience } = grantScopes(
    parseScope(requestedScope),
    {
      resolveProject: (id) => resolveAudienceProject(ctx, id),
      subjectOrg: { id: org.id, domains: org.domains.map((d) => d.domainName) },
    },
    options.dropScopes,
  );
  const scope = scopes.join(' ');
  const resources = requestedResources(ctx, options.resources);
  // Resources (and `:aud` projects) name the audience; with neither, the machine user itself.
  const aud = resources.length > 0 ? [...new Set([...resourceAudience(resources, resourceDirectory(ctx), user.orgId), ...audience])] : audience.length > 0 ? audience : [clientId];
  const jwt = user.machine!.accessTokenType === 'ACCESS_TOKEN_TYPE_JWT';
  // The authentication is now; in the second of the user's revocation horizon it counts from the
  // next (domain/revocation-horizon.ts), and only then does the token carry it apart from `iat`.
  const began = beginningAt(user);
  const issued = await accessTokens.issue(jwt ? 'jwt' : 'opaque', {
    sub: user.id,
    clientId,
    aud,
    scope,
    ...(began !== clock.seconds() ? { authTime: began } : {}),
    cnf: options.dpop && { jkt: options.dpop.jkt },
    // A JWT carries the metadata and resource owner URN claims its scope asks for (docs/compatibility.md §3.3);
    // there is no app, so no role assertion.
    ...(jwt ? { jwtClaims: zitadelClaimsFor(ctx, user, scopes, undefined, false) } : {}),
  });
  const idToken =
    options.idToken && scopes.includes('openid')
      ? await ctx.idTokens.issue({
          sub: user.id,
          clientId,
          aud,
          authTime: issued.claims.authTime ?? issued.claims.iat,
          // Key-based machine authentication carries no amr (ZITADEL: empty for JWT profile).
          amr: [],
          accessToken: issued.token,
        })
      : undefined;
  return tokenResponseBody({ token: issued.token, tokenType: options.dpop ? 'DPoP' : 'Bearer', expiresIn: issued.expiresIn, scope, idToken });
}
