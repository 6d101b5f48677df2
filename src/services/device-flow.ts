import { TooManyDeviceAuthorizations, type DeviceAuthorization } from '../actors/device-authorizations.js';
import { OAuthError } from '../protocol/errors.js';
import type { UserSession } from '../actors/user-sessions.js';
import { authorizationScopes } from '../protocol/authorize/validate.js';
import { formatUserCode, POLL_INTERVAL_MS } from '../protocol/device-flow.js';
import type { Form } from '../protocol/form.js';
import { projectAccessDenied } from '../protocol/project-access.js';
import { appIsUsable } from '../domain/usable.js';
import { newUniqueId } from '../util/ids.js';
import { clock } from '../util/clock.js';
import type { View } from '../util/readonly.js';
import type { AuthenticatedClient } from './client-auth.js';
import type { FlowView } from './ports.js';
import { authorizeDirectory } from './authorize-directory.js';
import { requireUserApp, userAudience, type UserTokensPorts } from './user-tokens.js';
import { userAccessAudience } from './resource-targets.js';

/** What the device flow uses of the wired parts (src/app.ts). */
export type DeviceFlowPorts = Pick<FlowView, 'deviceAuthorizations' | 'instance' | 'issuer' | 'orgs' | 'userSessions'> & UserTokensPorts;

/** The page a person opens to enter a user code (ZITADEL's login path for it). */
export const DEVICE_PAGE_PATH = '/ui/login/device';

/**
 * The device authorization endpoint's work (RFC 8628 §3.1-3.2): an OIDC app with the device code
 * grant type asks for scopes, checked like an authorization request's; the answer carries the
 * codes once they are durable.
 */
export async function startDeviceAuthorization(ctx: DeviceFlowPorts, client: AuthenticatedClient, form: Form): Promise<Record<string, unknown>> {
  const app = requireUserApp(client, 'OIDC_GRANT_TYPE_DEVICE_CODE', 'urn:ietf:params:oauth:grant-type:device_code');
  const directory = authorizeDirectory(ctx);
  const { scopes, audienceProjects, orgId } = authorizationScopes(form.get('scope') ?? '', directory, app);
  const resources = directory.resources(form.all('resource'), app);
  const now = clock.now();
  let started: Awaited<ReturnType<DeviceFlowPorts['deviceAuthorizations']['start']>>;
  try {
    started = await ctx.deviceAuthorizations.start({ clientId: app.clientId, scopes, audienceProjects, ...(orgId ? { orgId } : {}), ...(resources.length > 0 ? { resources } : {}) }, now);
  } catch (error) {
    if (!(error instanceof TooManyDeviceAuthorizations)) throw error;
    throw new OAuthError('temporarily_unavailable', 'too many device authorizations of this application under way; try again in a few minutes', { status: 429, headers: { 'Retry-After': '300' } });
  }
  const userCode = formatUserCode(started.userCode);
  const page = ctx.issuer + DEVICE_PAGE_PATH;
  return {
    device_code: started.deviceCode,
    user_code: userCode,
    verification_uri: page,
    verification_uri_complete: `${page}?user_code=${userCode}`,
    expires_in: Math.round((started.expiresAt - now) / 1000),
    interval: POLL_INTERVAL_MS / 1000,
  };
}

/** Why a signed-in person may not allow a device (shown on the page), or undefined when they may. */
type DeviceRefusal = 'inactive' | 'org' | { denied: string };

/**
 * The person's answer on the device page, in their browser session. Allowing checks what the code
 * flow checks when it hands out a code (the app still usable, the user active and in the requested
 * org, the project's checks); a refused or denied device gets `access_denied` when it polls.
 */
export async function decideDevice(ctx: DeviceFlowPorts, authorization: View<DeviceAuthorization>, session: View<UserSession>, allow: boolean): Promise<{ decided: boolean; refusal?: DeviceRefusal }> {
  if (!allow) return { decided: await ctx.deviceAuthorizations.deny(authorization) };
  const app = ctx.clients.appByClient(authorization.clientId);
  const user = ctx.orgs.getUser(session.userId);
  // Refused ones are denied too: the device learns at its next poll instead of waiting for expiry.
  if (!app?.oidc || !appIsUsable(app, ctx.orgs) || !ctx.orgs.isActive(user)) return { decided: await ctx.deviceAuthorizations.deny(authorization), refusal: 'inactive' };
  if (authorization.orgId !== undefined && user.orgId !== authorization.orgId) return { decided: await ctx.deviceAuthorizations.deny(authorization), refusal: 'org' };
  const project = ctx.orgs.getProject(app.projectId);
  const denied = project && projectAccessDenied(project, user, ctx.orgs.grantsOf(user.id));
  if (denied) return { decided: await ctx.deviceAuthorizations.deny(authorization), refusal: { denied } };
  // The resources' projects have their checks too (RFC 8707).
  try {
    userAccessAudience(ctx, app, user, [], () => [], authorization.resources);
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    return { decided: await ctx.deviceAuthorizations.deny(authorization), refusal: { denied: error.description } };
  }
  ctx.userSessions.touch(session);
  const decided = await ctx.deviceAuthorizations.approve(authorization, {
    grantId: newUniqueId(),
    userId: user.id,
    sid: session.id,
    audience: userAudience(ctx, app, authorization.audienceProjects),
    authTime: session.authTime,
    amr: session.amr,
  });
  return { decided };
}
