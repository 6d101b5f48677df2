import { ALL_AUTH_METHODS } from '../../protocol/client-auth-methods.js';
import { DEVICE_CODE_GRANT } from '../../protocol/device-flow.js';
import { PATHS } from '../../protocol/discovery.js';
import { OAuthError } from '../../protocol/errors.js';
import { narrowResources } from '../../protocol/resource-indicators.js';
import { requestedResources, userAccessAudience } from '../resource-targets.js';
import { clock } from '../../util/clock.js';
import { appLifetimes, issueUserTokens, refreshBinding, requireUserApp, revokeGrant, tokenResponse, userAudience, revokeOnReplay } from '../user-tokens.js';
import type { Grant } from './grant.js';
import type { FlowView } from '../ports.js';
import type { UserTokensPorts } from '../user-tokens.js';

/** What this grant uses of the wired parts (src/app.ts). */
export type DeviceCodePorts = Pick<FlowView, 'deviceAuthorizations' | 'orgs' | 'refreshTokens' | 'issuedTokens' | 'userSessions'> & UserTokensPorts;

/**
 * urn:ietf:params:oauth:grant-type:device_code (RFC 8628 §3.4-3.5): the device polls until the
 * person allowed or denied it in the browser, then gets the tokens the code grant would give for
 * the same sign-in (ID token, refresh token with offline_access, role claims), once.
 */
export const deviceCodeGrant: Grant<DeviceCodePorts> = {
  type: DEVICE_CODE_GRANT,
  label: 'device_code',
  clientPolicy: { methods: ALL_AUTH_METHODS, endpoint: PATHS.token, apps: true, machineUsers: false },
  async handle({ form, client, ctx, dpop }) {
    const app = requireUserApp(client, 'OIDC_GRANT_TYPE_DEVICE_CODE', DEVICE_CODE_GRANT);
    const deviceCode = form.get('device_code');
    if (deviceCode === undefined) throw new OAuthError('invalid_request', 'device_code missing');
    const authorization = await ctx.deviceAuthorizations.byDeviceCode(deviceCode);
    if (!authorization || authorization.clientId !== app.clientId) throw new OAuthError('invalid_grant', 'device_code is invalid');
    if (authorization.state === 'redeemed') {
      // As for a replayed code (RFC 6749 §4.1.2): what the first use issued is revoked.
      if (authorization.approval) await revokeGrant(ctx, authorization.approval.grantId);
      throw new OAuthError('invalid_grant', 'device_code was already used; the tokens issued with it are revoked');
    }
    const now = clock.now();
    if (authorization.exp <= now) throw new OAuthError('expired_token', 'device_code expired; start a new device authorization');
    if ((await ctx.deviceAuthorizations.poll(authorization, now)) === 'slow_down') {
      throw new OAuthError('slow_down', 'polled before the interval was up; wait 5 seconds longer from now on');
    }
    if (authorization.state === 'pending') throw new OAuthError('authorization_pending', 'the user has not yet allowed or denied the device');
    if (authorization.state === 'denied' || !authorization.approval) throw new OAuthError('access_denied', 'the user denied the device', { status: 400 });

    const approval = authorization.approval;
    const user = ctx.orgs.getUser(approval.userId);
    if (!ctx.orgs.isActive(user) || (await ctx.issuedTokens.isSessionEnded(approval.sid))) {
      throw new OAuthError('invalid_grant', 'the user or the session is no longer active');
    }
    // RFC 8707 §2.2: the token may be for fewer of the authorization's resources, never others;
    // its audience is worked out (and refused) before the code is spent.
    const resources = narrowResources(authorization.resources ?? [], requestedResources(ctx, form.all('resource')));
    const accessAudience = userAccessAudience(ctx, app, user, approval.audience, () => userAudience(ctx, app, []), resources);
    const redemption = ctx.deviceAuthorizations.redeem(authorization);
    if (!redemption.redeemed) throw new OAuthError('invalid_grant', 'device_code was already used');

    const grant = { ...approval, clientId: app.clientId, scopes: authorization.scopes, ...(authorization.resources ? { resources: authorization.resources } : {}) };
    const withRefresh = grant.scopes.includes('offline_access') && app.oidc!.grantTypes.includes('OIDC_GRANT_TYPE_REFRESH_TOKEN');
    const [tokens, refreshToken] = await Promise.all([
      issueUserTokens(ctx, { ...grant, app, user, accessAudience }, { accessToken: true, idToken: true, dpop }),
      withRefresh ? ctx.refreshTokens.create(grant.grantId, { ...grant, ...refreshBinding(app, dpop) }, appLifetimes(ctx, app).refresh) : undefined,
      redemption.written,
      // The apps told when the session ends (back-channel logout): the device got tokens in it.
      ctx.userSessions.recordClient(approval.sid, app.clientId),
    ]).catch(revokeOnReplay(ctx, approval.grantId, 'device_code'));
    return tokenResponse(tokens, grant.scopes, refreshToken);
  },
};
