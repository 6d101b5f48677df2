import type { UserSession } from '../actors/user-sessions.js';
import type { AppContext } from '../http/context.js';
import { formPostResponse, htmlResponse, redirectResponse } from '../http/html.js';
import type { Response } from '../http/types.js';
import type { ErrorTarget, ValidatedAuthRequest } from '../oauth/authorize/validate.js';
import { deliver, type Delivery } from '../oauth/response-mode.js';
import { issueUserTokens, userAudience } from '../oauth/user-tokens.js';
import type { Locale } from '../ui/i18n.js';
import { errorPage, formPostPage } from '../ui/pages.js';
import { newId } from '../util/ids.js';
import { projectAccessDenied } from '../oauth/project-access.js';
import { clock } from '../util/clock.js';

/**
 * The end of an authorization: the code (committed before the redirect) or the implicit tokens,
 * delivered to the redirect_uri in the request's response mode; or an error delivered the same way.
 */
export function deliveryResponse(delivery: Delivery, locale: Locale, headers: Record<string, string> = {}): Response {
  if (delivery.kind === 'redirect') return redirectResponse(delivery.location, headers);
  return formPostResponse(formPostPage(locale, delivery.action, delivery.params), headers);
}

export function authorizeError(
  target: ErrorTarget,
  error: string,
  description: string,
  locale: Locale,
  headers: Record<string, string> = {},
): Response {
  return deliveryResponse(deliver(target.redirectUri, target.responseMode, { error, error_description: description, state: target.state }), locale, headers);
}

export async function completeAuthorization(
  ctx: AppContext,
  request: ValidatedAuthRequest,
  session: UserSession,
  locale: Locale,
  headers: Record<string, string> = {},
): Promise<Response> {
  const app = ctx.clients.appByClient(request.clientId);
  const user = ctx.orgs.getUser(session.userId);
  if (!app?.oidc || app.state !== 'APP_STATE_ACTIVE' || !ctx.orgs.isActive(user)) {
    return htmlResponse(400, errorPage(locale, 'The application or the user is no longer active.'), headers);
  }
  const project = ctx.orgs.getProject(app.projectId);
  const denied = project && projectAccessDenied(project, user, ctx.orgs.grantsOf(user.id));
  if (denied) return authorizeError(request, 'access_denied', denied, locale, headers);
  ctx.userSessions.touch(session);
  const grantId = newId();
  const audience = userAudience(ctx, app, request.audienceProjects);
  const grant = {
    grantId,
    clientId: app.clientId,
    userId: user.id,
    sid: session.id,
    scopes: request.scopes,
    audience,
    authTime: session.authTime,
    amr: session.amr,
  };
  let params: Record<string, string | undefined>;
  if (request.responseType === 'code') {
    const code = await ctx.authCodes.issue({
      ...grant,
      redirectUri: request.redirectUri,
      ...(request.codeChallenge ? { codeChallenge: request.codeChallenge } : {}),
      ...(request.nonce !== undefined ? { nonce: request.nonce } : {}),
    });
    params = { code, state: request.state };
  } else {
    const withAccessToken = request.responseType === 'id_token token';
    const tokens = await issueUserTokens(ctx, { ...grant, app, user, nonce: request.nonce }, { accessToken: withAccessToken, idToken: true });
    params = {
      access_token: tokens.accessToken?.token,
      token_type: withAccessToken ? 'Bearer' : undefined,
      expires_in: tokens.accessToken ? String(tokens.accessToken.expiresIn) : undefined,
      scope: withAccessToken ? request.scopes.join(' ') : undefined,
      id_token: tokens.idToken,
      state: request.state,
    };
  }
  return deliveryResponse(deliver(request.redirectUri, request.responseMode, params), locale, headers);
}

/** The user sessions of this agent that may answer the request: live, active user, right org, fresh enough. */
export function usableSessions(ctx: AppContext, agentId: string | undefined, request: ValidatedAuthRequest, now = clock.now()): UserSession[] {
  return ctx.userSessions.ofAgent(agentId).filter((s) => {
    if (ctx.sessions.isSessionEnded(s.id)) return false;
    const user = ctx.orgs.getUser(s.userId);
    if (!ctx.orgs.isActive(user)) return false;
    return request.orgId === undefined || user.orgId === request.orgId;
  });
}

export function isFresh(session: UserSession, maxAge: number | undefined, now = clock.now()): boolean {
  return maxAge === undefined || Math.floor(now / 1000) - session.authTime <= maxAge;
}
