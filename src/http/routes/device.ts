import type { LoginStep } from '../../actors/auth-requests.js';
import type { AuthChecks } from '../../model/auth-checks.js';
import type { ValidatedAuthRequest } from '../../model/authorization.js';
import { appIsUsable } from '../../domain/usable.js';
import { normalizeUserCode } from '../../protocol/device-flow.js';
import { parseFormBody, parseUrlEncoded } from '../../protocol/form.js';
import { DEVICE_PAGE_PATH, type DeviceFlowPorts } from '../../services/device-flow.js';
import type { FlowView } from '../../services/ports.js';
import { translator } from '../../ui/i18n.js';
import { deviceCodePage, errorPage } from '../../ui/pages.js';
import { addressLimitKey } from '../../util/address-key.js';
import { clock } from '../../util/clock.js';
import { csrfToken, csrfValid } from '../csrf.js';
import { htmlResponse, redirectResponse } from '../html.js';
import { agentOf, ensureAgentCookie, type AgentPorts } from '../login/agent.js';
import { startFromSessions, usableSessions, type RespondPorts } from '../login/respond.js';
import type { Request, Response, Route } from '../types.js';
import { LOGIN_PATH } from './authorize.js';

/** What this module uses of the wired parts (src/app.ts). */
export type DevicePagePorts = Pick<FlowView, 'authRequests' | 'clients' | 'failureWindows' | 'masterKey' | 'orgs'> & AgentPorts & RespondPorts & DeviceFlowPorts;

/**
 * The device page of the login UI (RFC 8628 §3.3): GET shows a form for the user code (filled in
 * from `?user_code=`), POST looks it up and starts a sign-in for that device, which ends on the
 * consent step (src/http/routes/login.ts). Plain HTML, CSRF token bound to the browser's cookie.
 * Wrong codes are limited per client address (an IPv6 one by its /64): 10 in 15 minutes, then every code is refused
 * until the oldest leaves the window (RFC 8628 §5.1: the short code must not be brute-forced).
 */
const MAX_WRONG_CODES = 10;
const WRONG_CODE_WINDOW_MS = 15 * 60_000;
/** The CSRF binding of the code form (it belongs to no auth request yet). */
const DEVICE_FORM = 'device-code';

export function devicePageRoutes(ctx: DevicePagePorts): Route[] {
  const csrfKey = ctx.masterKey.deriveKey('login-csrf');
  // Counted in the store: every thread serving this page counts into one window per address.
  const wrongCodes = ctx.failureWindows.window('device-code', MAX_WRONG_CODES, WRONG_CODE_WINDOW_MS);

  const show = (req: Request, uiLocales?: string, typed?: string) => {
    const agent = agentOf(ctx, req, uiLocales);
    const { cookie, headers } = ensureAgentCookie(ctx, agent);
    return htmlResponse(200, deviceCodePage(agent.locale, { csrf: csrfToken(csrfKey, cookie, DEVICE_FORM), ...(typed ? { userCode: typed } : {}) }), headers);
  };

  const submit = async (req: Request): Promise<Response> => {
    const form = parseFormBody(req.headers['content-type'], req.body);
    const agent = agentOf(ctx, req);
    const t = translator(agent.locale);
    if (!agent.cookie || !agent.agentId || !csrfValid(csrfKey, agent.cookie, DEVICE_FORM, form.get('csrf'))) {
      return htmlResponse(403, errorPage(agent.locale, t('error.csrf')));
    }
    const typed = (form.get('user_code') ?? '').slice(0, 64);
    const csrf = csrfToken(csrfKey, agent.cookie, DEVICE_FORM);
    const address = addressLimitKey(req.peer ?? '');
    const now = clock.now();
    const blockedFor = await wrongCodes.blockedFor(address, now);
    if (blockedFor > 0) {
      return htmlResponse(429, deviceCodePage(agent.locale, { csrf, userCode: typed, error: t('device.tooMany') }), { 'Retry-After': String(Math.ceil(blockedFor / 1000)) });
    }
    const code = normalizeUserCode(typed);
    const authorization = code === undefined ? undefined : await ctx.deviceAuthorizations.pendingByUserCode(code, now);
    if (!authorization) {
      await wrongCodes.fail(address, now);
      return htmlResponse(400, deviceCodePage(agent.locale, { csrf, userCode: typed, error: t('device.invalid') }));
    }
    const app = ctx.clients.appByClient(authorization.clientId);
    if (!app?.oidc || !appIsUsable(app, ctx.orgs)) return htmlResponse(400, errorPage(agent.locale, t('error.inactive')));

    // The device's request as the login sees an authorization request; it has no redirect_uri to answer.
    const request: ValidatedAuthRequest = {
      clientId: app.clientId,
      appId: app.id,
      projectId: app.projectId,
      redirectUri: '',
      responseType: 'code',
      responseMode: 'query',
      scopes: [...authorization.scopes],
      audienceProjects: [...authorization.audienceProjects],
      orgId: authorization.orgId,
      state: undefined,
      nonce: undefined,
      codeChallenge: undefined,
      prompt: new Set(),
      maxAge: undefined,
      loginHint: undefined,
      idTokenHint: undefined,
      uiLocales: undefined,
      device: authorization.id,
      ...(authorization.resources ? { resources: [...authorization.resources] } : {}),
    };
    // As at the authorization endpoint: one usable session goes straight on (here: to consent), several are chosen from.
    const start = startFromSessions(ctx, await usableSessions(ctx, agent.agentId, request), request, now);
    let step: LoginStep = 'loginname';
    let begin: { userId?: string; checks?: AuthChecks; consentSid?: string } = {};
    if (start && 'answer' in start) {
      step = 'device-consent';
      begin = { consentSid: start.answer.id };
    } else if (start) {
      step = start.step;
      begin = { ...(start.userId ? { userId: start.userId } : {}), ...(start.checks ? { checks: start.checks } : {}) };
    }
    const created = await ctx.authRequests.create(agent.agentId, request, agent.locale, step, { ...begin, address });
    return redirectResponse(`${LOGIN_PATH}?authRequestID=${created.id}`, {}, 303);
  };

  return [
    {
      pattern: DEVICE_PAGE_PATH,
      errorStyle: 'html',
      peerAddress: true,
      methods: {
        GET: (req) => {
          const query = parseUrlEncoded(req.query);
          return show(req, query.get('ui_locales'), query.get('user_code')?.slice(0, 64));
        },
        POST: submit,
      },
    },
  ];
}
