import { appIsUsable } from '../../domain/usable.js';
import type { UserSession } from '../../actors/user-sessions.js';
import type { FlowView } from '../../services/ports.js';
import { formPostResponse, htmlResponse, redirectResponse } from '../html.js';
import type { Response } from '../types.js';
import type { ErrorTarget, ValidatedAuthRequest } from '../../protocol/authorize/validate.js';
import { deliver, type Delivery } from '../../protocol/response-mode.js';
import { issueUserTokens, userAudience } from '../../services/user-tokens.js';
import { appCarriesPowerOf } from '../../services/token-power.js';
import { userAccessAudience } from '../../services/resource-targets.js';
import { OAuthError } from '../../protocol/errors.js';
import { countIssuedTokens } from '../../services/issued-token-counts.js';
import { translator, type Locale } from '../../ui/i18n.js';
import { clientErrorPage, errorPage, formPostPage, nativeSuccessPage, type ContinueTo } from '../../ui/pages.js';
import type { LoginStep } from '../../actors/auth-requests.js';
import { firstFactorAt, type AuthChecks } from '../../model/auth-checks.js';
import { factsOf, sessionRequirement, type SessionRequirement } from '../../domain/sign-in-policy.js';
import { newUniqueId } from '../../util/ids.js';
import { projectAccessDenied } from '../../protocol/project-access.js';
import { clock } from '../../util/clock.js';
import { predatesHorizon } from '../../domain/revocation-horizon.js';
import type { UserTokensPorts } from '../../services/user-tokens.js';
import type { View } from '../../util/readonly.js';

/** What this module uses of the wired parts (src/app.ts). */
export type RespondPorts = Pick<FlowView, 'authCodes' | 'clients' | 'consents' | 'issuer' | 'orgs' | 'issuedTokens' | 'userSessions' | 'idps'> & UserTokensPorts;

/**
 * Whether the person must first allow the client what the request asks for: only a self-registered
 * client (anyone may have made it) asks, unless the person allowed it as much before; prompt=consent
 * asks again. ZITADEL's own apps are the instance's, as in ZITADEL, and never ask.
 */
export async function consentNeeded(ctx: Pick<RespondPorts, 'clients' | 'consents'>, request: ValidatedAuthRequest, userId: string): Promise<boolean> {
  const app = ctx.clients.appByClient(request.clientId);
  if (app?.registration === undefined) return false;
  return request.prompt.has('consent') || !(await ctx.consents.covers(userId, app.clientId, request.scopes, request.resources ?? []));
}

/**
 * The end of an authorization: the code (committed before the redirect) or the implicit tokens,
 * delivered to the redirect_uri in the request's response mode; or an error delivered the same way.
 */
function deliveryResponse(delivery: Delivery, locale: Locale, headers: Record<string, string> = {}): Response {
  if (delivery.kind === 'redirect') return redirectResponse(delivery.location, headers);
  return formPostResponse(formPostPage(locale, delivery.action, delivery.params), headers);
}

/** The way to a client on Sesame's page, for a delivery Sesame does not make by itself. */
function continueTo(delivery: Delivery): ContinueTo {
  return delivery.kind === 'redirect' ? { href: delivery.location } : { action: delivery.action, params: delivery.params };
}

/**
 * An authorization error, delivered to the redirect_uri in the response mode with `state` and
 * `iss`. A self-registered client's redirect_uri is whatever anyone registered: sending the
 * browser there on Sesame's word would make Sesame an open redirector (RFC 9700 §4.11.2: an
 * invalid scope, prompt=none or a denied consent would bounce a person who followed a link to
 * Sesame on to the registrant's page). Its errors are shown on Sesame's page with a link that
 * delivers them; it gets a redirect only with what the person allowed it. The instance's own apps
 * are redirected to at once, as in ZITADEL.
 */
export function authorizeError(ctx: Pick<RespondPorts, 'clients' | 'issuer'>, target: ErrorTarget, error: string, description: string, locale: Locale, headers: Record<string, string> = {}): Response {
  const delivery = deliver(target.redirectUri, target.responseMode, { error, error_description: description, state: target.state, iss: ctx.issuer });
  const app = ctx.clients.appByClient(target.clientId);
  if (app !== undefined && app.registration === undefined) return deliveryResponse(delivery, locale, headers);
  // A self-registered client, or an app removed meanwhile (nobody vouches for its URI any more).
  const link = { clientName: app?.name ?? target.clientId, selfRegistered: app?.registration !== undefined, continueTo: continueTo(delivery) };
  return htmlResponse(400, clientErrorPage(locale, description, link), headers);
}

export async function completeAuthorization(
  ctx: RespondPorts,
  request: ValidatedAuthRequest,
  session: View<UserSession>,
  locale: Locale,
  headers: Record<string, string> = {},
  /** The person has just allowed the client at the consent step, or the caller found no consent needed (a second read spared). */
  consentSettled = false,
): Promise<Response> {
  const app = ctx.clients.appByClient(request.clientId);
  const user = ctx.orgs.getUser(session.userId);
  if (!app?.oidc || !appIsUsable(app, ctx.orgs) || !ctx.orgs.isActive(user)) {
    return htmlResponse(400, errorPage(locale, translator(locale)('error.inactive')), headers);
  }
  const project = ctx.orgs.getProject(app.projectId);
  const denied = project && projectAccessDenied(project, user, ctx.orgs.grantsOf(user.id));
  if (denied) return authorizeError(ctx, request, 'access_denied', denied, locale, headers);
  // Callers take the person to the consent step first; without UI (prompt=none) the answer is this.
  if (!consentSettled && (await consentNeeded(ctx, request, user.id)))
    return authorizeError(ctx, request, 'consent_required', 'the user has not allowed this client what it asks for', locale, headers);
  // Asked for by the app, the management API's audience would carry the person's administrative
  // power to an app that may not carry it: refused here, where the person can be told.
  if (request.audienceProjects.includes(ctx.instance.managementProjectId) && !appCarriesPowerOf(ctx, app, user.id)) {
    return authorizeError(ctx, request, 'access_denied', "this application may not act with the person's administrative roles (they reach beyond its organization)", locale, headers);
  }
  const audience = userAudience(ctx, app, request.audienceProjects);
  // The resources' projects have their checks too (RFC 8707): refused now, not at the code's redemption.
  let accessAudience: readonly string[] | undefined;
  try {
    accessAudience = userAccessAudience(ctx, app, user, audience, () => userAudience(ctx, app, []), request.resources);
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    return authorizeError(ctx, request, error.error === 'invalid_grant' ? 'access_denied' : error.error, error.description, locale, headers);
  }
  ctx.userSessions.touch(session);
  const grantId = newUniqueId();
  const grant = {
    grantId,
    clientId: app.clientId,
    userId: user.id,
    sid: session.id,
    scopes: request.scopes,
    audience,
    authTime: session.authTime,
    amr: session.amr,
    ...(request.resources ? { resources: request.resources } : {}),
  };
  let params: Record<string, string | undefined>;
  if (request.responseType === 'code') {
    const code = await ctx.authCodes.issue({
      ...grant,
      redirectUri: request.redirectUri,
      ...(request.codeChallenge ? { codeChallenge: request.codeChallenge } : {}),
      ...(request.dpopJkt ? { dpopJkt: request.dpopJkt } : {}),
      ...(request.nonce !== undefined ? { nonce: request.nonce } : {}),
    });
    params = { code, state: request.state };
  } else {
    const withAccessToken = request.responseType === 'id_token token';
    const [tokens] = await Promise.all([
      issueUserTokens(ctx, { ...grant, app, user, nonce: request.nonce, accessAudience }, { accessToken: withAccessToken, idToken: true }),
      // The apps told when the session ends (back-channel logout).
      ctx.userSessions.recordClient(session.id, app.clientId),
    ]);
    params = {
      access_token: tokens.accessToken?.token,
      token_type: withAccessToken ? 'Bearer' : undefined,
      expires_in: tokens.accessToken ? String(tokens.accessToken.expiresIn) : undefined,
      scope: withAccessToken ? request.scopes.join(' ') : undefined,
      id_token: tokens.idToken,
      state: request.state,
    };
    countIssuedTokens('implicit', params);
  }
  // RFC 9207: the issuer in every authorization response, so a client talking to several providers can tell who answered.
  const delivery = deliver(request.redirectUri, request.responseMode, { ...params, iss: ctx.issuer });
  // ZITADEL's success page for native apps, unless the app skips it; prompt=none never shows UI.
  if (delivery.kind === 'redirect' && app.oidc.appType === 'OIDC_APP_TYPE_NATIVE' && !app.oidc.skipNativeAppSuccessPage && !request.prompt.has('none')) {
    return htmlResponse(200, nativeSuccessPage(locale, delivery.location, app.name), headers);
  }
  return deliveryResponse(delivery, locale, headers);
}

/** The user sessions of this agent that may answer the request: live, active user, right org, fresh enough. */
export async function usableSessions(ctx: RespondPorts, agentId: string | undefined, request: ValidatedAuthRequest): Promise<View<UserSession>[]> {
  const sessions = await ctx.userSessions.ofAgent(agentId);
  const ended = await Promise.all(sessions.map((s) => ctx.issuedTokens.isSessionEnded(s.id)));
  return sessions.filter((s, i) => {
    if (ended[i]) return false;
    const user = ctx.orgs.getUser(s.userId);
    if (!ctx.orgs.isActive(user)) return false;
    // Authenticated before a change of the user's credentials or state: it vouches for nothing.
    if (predatesHorizon(user, firstFactorAt(ctx.userSessions.checksOf(s)) ?? s.authTime)) return false;
    return request.orgId === undefined || user.orgId === request.orgId;
  });
}

function isFresh(session: View<UserSession>, maxAge: number | undefined, now = clock.now()): boolean {
  return maxAge === undefined || Math.floor(now / 1000) - session.authTime <= maxAge;
}

/**
 * Whether a browser session may answer this request without asking anything (`max_age`, then the
 * login policy's check lifetimes), and otherwise which check is due.
 */
export function sessionRequirementOf(ctx: RespondPorts, session: View<UserSession>, request: ValidatedAuthRequest, now = clock.now()): SessionRequirement {
  const user = ctx.orgs.getUser(session.userId);
  if (!user) return 'password';
  return sessionRequirement(sessionChecks(ctx, session), factsOf(user), ctx.orgs.policy('login', user.orgId).policy, now, !isFresh(session, request.maxAge, now));
}

/**
 * A session's checks as they count now: a sign-in at an identity provider the person's login
 * policy no longer offers (removed, or taken off the policy) vouches for nothing from then on.
 */
export function sessionChecks(ctx: Pick<RespondPorts, 'userSessions' | 'orgs' | 'idps'>, session: View<UserSession>): AuthChecks {
  const checks = ctx.userSessions.checksOf(session);
  const user = ctx.orgs.getUser(session.userId);
  if (checks.idpAt === undefined || (user && checks.idpId && ctx.idps.usableBy(checks.idpId, user.orgId))) return checks;
  const { idpAt: _at, idpId: _id, ...rest } = checks;
  return rest;
}

/**
 * How a request without prompt starts from the browser's usable sessions (the authorization
 * endpoint, the device page): several are chosen from; one answers at once if it may, else the
 * login resumes it; none: undefined (the caller asks for a login name or password).
 */
export function startFromSessions(
  ctx: RespondPorts,
  candidates: readonly View<UserSession>[],
  request: ValidatedAuthRequest,
  now = clock.now(),
): { answer: View<UserSession> } | { step: LoginStep; userId?: string; checks?: AuthChecks } | undefined {
  if (candidates.length > 1) return { step: 'select' };
  const session = candidates[0];
  if (!session) return undefined;
  const requirement = sessionRequirementOf(ctx, session, request, now);
  return requirement === 'ok' ? { answer: session } : resumeSession(ctx, session, requirement);
}

/** Where the login continues for a session that cannot answer as it is: the due step, with the checks still valid. */
export function resumeSession(ctx: RespondPorts, session: View<UserSession>, requirement: Exclude<SessionRequirement, 'ok'>): { step: LoginStep; userId: string; checks?: AuthChecks } {
  if (requirement === 'password') return { step: 'password', userId: session.userId };
  // The password is still valid: only the second factor (or its enrollment) is asked for.
  const { passwordAt, idpAt, idpId, passwordlessAt } = sessionChecks(ctx, session);
  return { step: requirement, userId: session.userId, checks: { passwordAt, ...(idpAt !== undefined ? { idpAt, idpId } : {}), ...(passwordlessAt !== undefined ? { passwordlessAt } : {}) } };
}
