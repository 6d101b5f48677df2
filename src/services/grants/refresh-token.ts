import { ALL_AUTH_METHODS } from '../../protocol/client-auth-methods.js';
import { PATHS } from '../../protocol/discovery.js';
import { OAuthError } from '../../protocol/errors.js';
import { parseScope } from '../../protocol/scopes.js';
import { projectAccessDenied } from '../../protocol/project-access.js';
import { narrowResources } from '../../protocol/resource-indicators.js';
import { requestedResources, userAccessAudience } from '../resource-targets.js';
import { issueUserTokens, requireUserApp, revokeGrant, tokenResponse, userAudience } from '../user-tokens.js';
import type { Grant } from './grant.js';
import type { FlowView } from '../ports.js';
import { DecidedElsewhere } from '../../model/errors.js';
import type { UserTokensPorts } from '../user-tokens.js';

/** What this grant uses of the wired parts (src/app.ts). */
export type RefreshTokenPorts = Pick<FlowView, 'orgs' | 'refreshTokens' | 'issuedTokens' | 'userSessions'> & UserTokensPorts;

/**
 * refresh_token (RFC 6749 §6; docs/compatibility.md §4.2; OAuth 2.0 Security BCP §4.14): rotation
 * on every use, reuse revokes the family, scope may only narrow, the user must still be active.
 * Public clients authenticate with client_id alone (docs/compatibility.md §4).
 */
const INVALID = 'refresh token is invalid, expired or revoked';

/**
 * The store said another use rotated the token first (another thread's), or the rotation a retry's
 * successor came from lost to one: this use is that token's second, judged as one — the same successor within the grace window, else reuse, which revokes the
 * family (and with it the tokens this use issued meanwhile, never handed out).
 */
async function secondUse(ctx: RefreshTokenPorts, token: string, familyId: string, error: unknown): Promise<string> {
  if (!(error instanceof DecidedElsewhere)) throw error;
  const again = await ctx.refreshTokens.rotate(token);
  if (again.status === 'retried') {
    try {
      await again.committed;
      return again.token;
    } catch (another) {
      // Lost twice in a row: judged as reuse (the safe side), below.
      if (!(another instanceof DecidedElsewhere)) throw another;
    }
  }
  await revokeGrant(ctx, familyId);
  throw new OAuthError('invalid_grant', 'refresh token was already used; every token of its grant is revoked');
}

export const refreshTokenGrant: Grant<RefreshTokenPorts> = {
  type: 'refresh_token',
  label: 'refresh_token',
  clientPolicy: { methods: ALL_AUTH_METHODS, endpoint: PATHS.token, apps: true, machineUsers: false },
  async handle({ form, client, ctx, dpop }) {
    const app = requireUserApp(client, 'OIDC_GRANT_TYPE_REFRESH_TOKEN', 'refresh_token');
    const token = form.get('refresh_token');
    if (token === undefined) throw new OAuthError('invalid_request', 'refresh_token missing');

    const family = await ctx.refreshTokens.familyOf(token);
    // Another client's token is refused without touching the family (its owner may still use it).
    if (!family || family.clientId !== app.clientId) throw new OAuthError('invalid_grant', INVALID);
    // A DPoP-bound family (RFC 9449 §5) is refreshed only with a proof of its key; checked before
    // the rotation, so a thief without the key spends nothing.
    if (family.jkt !== undefined && dpop?.jkt !== family.jkt) {
      throw new OAuthError('invalid_dpop_proof', dpop ? 'the refresh token is bound to another DPoP key' : 'the refresh token is DPoP-bound: send a DPoP proof of its key');
    }
    let scopes = family.scopes;
    const requested = form.get('scope');
    if (requested !== undefined) {
      const asked = parseScope(requested);
      const beyond = asked.filter((s) => !family.scopes.includes(s));
      if (beyond.length > 0) throw new OAuthError('invalid_scope', `scope exceeds the granted scope: ${beyond.join(' ')}`);
      scopes = family.scopes.filter((s) => asked.includes(s));
    }

    // RFC 8707 §2.2: a refresh may ask for one (or some) of the authorization's resources; checked
    // before the rotation, so a refused request leaves the token usable.
    const resources = narrowResources(family.resources ?? [], requestedResources(ctx, form.all('resource')));
    // So is the audience they give (a resource since unregistered, or a project the user may no
    // longer use): the family is not spent on a request that cannot succeed.
    const owner = ctx.orgs.getUser(family.userId);
    const accessAudience = ctx.orgs.isActive(owner) ? userAccessAudience(ctx, app, owner, family.audience, () => userAudience(ctx, app, []), resources) : undefined;

    // An ended session or a revoked grant, read before the rotation (in one look). Not after it: the loser of two uses at once revokes the grant as reuse, and a
    // winner that read after that would refuse too, so neither use would succeed. A revocation
    // landing between this read and the rotation still kills what this use issues: its access tokens
    // are checked against the grant at use, its successor is of the revoked family.
    // A family its users voided since its sign-in (their revocation horizon) is refused by issueUserTokens.
    if (await ctx.issuedTokens.isRevokedByOrigin({ grantId: family.id, sid: family.sid })) throw new OAuthError('invalid_grant', INVALID);

    const rotation = await ctx.refreshTokens.rotate(token);
    if (rotation.status === 'invalid' || rotation.status === 'expired') throw new OAuthError('invalid_grant', INVALID);
    if (rotation.status === 'reused') {
      await revokeGrant(ctx, family.id);
      throw new OAuthError('invalid_grant', 'refresh token was already used; every token of its grant is revoked');
    }
    const user = ctx.orgs.getUser(family.userId);
    if (!ctx.orgs.isActive(user)) throw new OAuthError('invalid_grant', INVALID);
    const project = ctx.orgs.getProject(app.projectId);
    const denied = project && projectAccessDenied(project, user, ctx.orgs.grantsOf(user.id));
    if (denied) throw new OAuthError('invalid_grant', denied);
    // A refresh is use of the session: it stays live while its tokens are used, so whatever ends the
    // user's sessions (a password set by an administrator, a lock) still finds it and revokes them.
    const session = await ctx.userSessions.get(family.sid);
    if (session) ctx.userSessions.touch(session);
    const userGrant = { ...rotation.family, grantId: family.id, scopes, app, user, accessAudience };
    const [tokens, refreshToken] = await Promise.all([
      issueUserTokens(ctx, userGrant, { accessToken: true, idToken: true, dpop }),
      // A retry's successor holds once the rotation it comes from is decided (another thread's may come first).
      rotation.committed.then(
        () => rotation.token,
        (error: unknown) => secondUse(ctx, token, family.id, error),
      ),
    ]);
    return tokenResponse(tokens, scopes, refreshToken);
  },
};
