import { ALL_AUTH_METHODS } from '../../protocol/client-auth-methods.js';
import { PATHS } from '../../protocol/discovery.js';
import { OAuthError } from '../../protocol/errors.js';
import { verifierMatches } from '../../protocol/pkce.js';
import { narrowResources } from '../../protocol/resource-indicators.js';
import { requestedResources, userAccessAudience } from '../resource-targets.js';
import { appLifetimes, issueUserTokens, refreshBinding, requireUserApp, revokeGrant, tokenResponse, userAudience, revokeOnReplay } from '../user-tokens.js';
import type { Grant } from './grant.js';
import type { FlowView } from '../ports.js';
import type { UserTokensPorts } from '../user-tokens.js';

/** What this grant uses of the wired parts (src/app.ts). */
export type AuthorizationCodePorts = Pick<FlowView, 'authCodes' | 'orgs' | 'refreshTokens' | 'issuedTokens' | 'userSessions'> & UserTokensPorts;

/**
 * authorization_code (RFC 6749 §4.1.3, RFC 7636 §4.6; docs/compatibility.md §4.2). A code is
 * single use: a second use answers invalid_grant and revokes what the first use issued.
 */
export const authorizationCodeGrant: Grant<AuthorizationCodePorts> = {
  type: 'authorization_code',
  label: 'authorization_code',
  clientPolicy: { methods: ALL_AUTH_METHODS, endpoint: PATHS.token, apps: true, machineUsers: false },
  async handle({ form, client, ctx, dpop }) {
    const app = requireUserApp(client, 'OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'authorization_code');
    const code = form.get('code');
    if (code === undefined) throw new OAuthError('invalid_request', 'code missing');
    const redirectUri = form.get('redirect_uri');
    if (redirectUri === undefined) throw new OAuthError('invalid_request', 'redirect_uri missing');
    const verifier = form.get('code_verifier');
    const askedResources = requestedResources(ctx, form.all('resource'));

    const found = await ctx.authCodes.find(code);
    if (!found || found.grant.clientId !== app.clientId) throw new OAuthError('invalid_grant', 'code is invalid or expired');
    const grant = found.grant;
    if (found.used) {
      await revokeGrant(ctx, grant.grantId);
      throw new OAuthError('invalid_grant', 'code was already used; the tokens issued with it are revoked');
    }
    if (grant.redirectUri !== redirectUri) throw new OAuthError('invalid_grant', 'redirect_uri does not correspond to the authorization request');
    if (grant.codeChallenge !== undefined) {
      if (verifier === undefined) throw new OAuthError('invalid_request', 'code_verifier required');
      if (!verifierMatches(verifier, grant.codeChallenge)) throw new OAuthError('invalid_grant', 'invalid code_verifier');
    } else if (verifier !== undefined) {
      throw new OAuthError('invalid_request', 'code_verifier unexpectedly provided');
    }
    // RFC 9449 §10: a code bound at the authorization endpoint is redeemed only with a proof of its key
    // (refused before it is spent: whoever lacks the key cannot use up the holder's code).
    if (grant.dpopJkt !== undefined && dpop?.jkt !== grant.dpopJkt) {
      throw new OAuthError('invalid_grant', dpop ? 'the code is bound to another DPoP key (dpop_jkt)' : 'the code is bound to a DPoP key (dpop_jkt): send a DPoP proof of it');
    }
    const user = ctx.orgs.getUser(grant.userId);
    if (!ctx.orgs.isActive(user) || (await ctx.issuedTokens.isSessionEnded(grant.sid))) {
      throw new OAuthError('invalid_grant', 'the user or the session is no longer active');
    }
    // RFC 8707 §2.2: the token may be for fewer of the authorization's resources, never others;
    // its audience is worked out (and refused) before the code is spent.
    const resources = narrowResources(grant.resources ?? [], askedResources);
    const accessAudience = userAccessAudience(ctx, app, user, grant.audience, () => userAudience(ctx, app, []), resources);
    const consumed = found.consume();

    const withRefresh = grant.scopes.includes('offline_access') && app.oidc!.grantTypes.includes('OIDC_GRANT_TYPE_REFRESH_TOKEN');
    const userGrant = { ...grant, app, user, accessAudience };
    const [tokens, refreshToken] = await Promise.all([
      issueUserTokens(ctx, userGrant, { accessToken: true, idToken: true, dpop }),
      withRefresh ? ctx.refreshTokens.create(grant.grantId, { ...grant, ...refreshBinding(app, dpop) }, appLifetimes(ctx, app).refresh) : undefined,
      consumed,
      // The session's record of who holds its tokens: the apps told when it ends (back-channel logout).
      ctx.userSessions.recordClient(grant.sid, app.clientId),
    ]).catch(revokeOnReplay(ctx, grant.grantId, 'code'));
    return tokenResponse(tokens, grant.scopes, refreshToken);
  },
};
