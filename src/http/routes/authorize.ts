import type { LoginStep } from '../../actors/auth-requests.js';
import { addressLimitKey } from '../../util/address-key.js';
import { agentOf, ensureAgentCookie } from '../login/agent.js';
import { authorizeError, completeAuthorization, consentNeeded, sessionRequirementOf, startFromSessions, usableSessions } from '../login/respond.js';
import type { AuthChecks } from '../../model/auth-checks.js';
import { validateAuthorizeRequest, type ValidatedAuthRequest } from '../../protocol/authorize/validate.js';
import { authorizeDirectory } from '../../services/authorize-directory.js';
import { PATHS } from '../../protocol/discovery.js';
import { formBodyText, parseUrlEncodedMulti } from '../../protocol/form.js';
import { errorPage } from '../../ui/pages.js';
import { log } from '../../util/log.js';
import type { FlowView } from '../../services/ports.js';
import { htmlResponse, redirectResponse } from '../html.js';
import type { Request, Response, Route } from '../types.js';
import type { AgentPorts } from '../login/agent.js';
import { DecidedElsewhere, NeedsOwner } from '../../model/errors.js';
import type { RespondPorts } from '../login/respond.js';

/** What this module uses of the wired parts (src/app.ts). */
export type AuthorizePorts = Pick<FlowView, 'authRequests' | 'clients' | 'config' | 'idTokens' | 'instance' | 'orgs' | 'pushedRequests'> & AgentPorts & RespondPorts;

/**
 * GET|POST /oauth/v2/authorize (docs/compatibility.md §6; OIDC Core §3.1.2). Validates the
 * request, then either answers at once from an existing session (SSO, prompt=none) or stores an
 * auth request bound to the user-agent cookie and sends the browser to the login UI.
 */
export const LOGIN_PATH = '/ui/login/login';

/** GET reads the query, POST the form body (OIDC Core §3.1.2.1), with the same strictness. */
function readParams(req: Request): Map<string, string[]> {
  return parseUrlEncodedMulti(req.method === 'POST' ? formBodyText(req.headers['content-type'], req.body) : req.query);
}

/** The user an id_token_hint or login_hint names (an invalid hint is ignored, as ZITADEL does). */
function hintedUser(ctx: AuthorizePorts, request: ValidatedAuthRequest): { userId?: string; loginName?: string } {
  if (request.idTokenHint) {
    const claims = ctx.idTokens.verifyHint(request.idTokenHint);
    if (typeof claims?.sub === 'string' && ctx.orgs.getUser(claims.sub)) return { userId: claims.sub };
  }
  if (request.loginHint) {
    const user = ctx.orgs.findUserByLoginName(request.loginHint);
    return user?.human ? { userId: user.id, loginName: request.loginHint } : { loginName: request.loginHint };
  }
  return {};
}

/**
 * The parameters of a request that names a pushed authorization request (RFC 9126 §4): only the
 * pushed ones count, taken once; a `request_uri` that is unknown, expired, used or another
 * client's is answered on Sesame's page (its redirect_uri is not known).
 */
const UNUSABLE_REQUEST_URI = 'The request_uri is unknown, expired, already used or belongs to another application. Start again from the application.';

async function pushedParams(ctx: AuthorizePorts, params: Map<string, string[]>): Promise<Map<string, string[]> | string> {
  const requestUri = params.get('request_uri')!;
  const clientId = params.get('client_id');
  if (requestUri.length !== 1 || clientId?.length !== 1) return 'A request with request_uri needs exactly one request_uri and one client_id.';
  const taken = await ctx.pushedRequests.take(requestUri[0]!, clientId[0]!);
  if (!taken) return UNUSABLE_REQUEST_URI;
  // Spent durably before the sign-in starts: a restart does not make it usable again. Another
  // thread that took it first makes this one used.
  try {
    await taken.removed;
  } catch (error) {
    if (error instanceof DecidedElsewhere) return UNUSABLE_REQUEST_URI;
    throw error;
  }
  return taken.params;
}

export function authorizeRoute(ctx: AuthorizePorts): Route {
  const directory = authorizeDirectory(ctx);
  const handle = async (req: Request): Promise<Response> => {
    let params = readParams(req);
    const pushed = ctx.config.featurePar && params.has('request_uri');
    if (pushed) {
      const found = await pushedParams(ctx, params);
      if (typeof found === 'string') return htmlResponse(400, errorPage(agentOf(ctx, req).locale, found));
      params = found;
    }
    const validation = validateAuthorizeRequest(params, directory, { pushed, dpop: ctx.config.featureDpop });
    const agent = agentOf(ctx, req, params.get('ui_locales')?.[0]);
    if (validation.kind === 'page') return htmlResponse(400, errorPage(agent.locale, validation.description));
    if (validation.kind === 'redirect-error') return authorizeError(ctx, validation.target, validation.error, validation.description, agent.locale);

    const request = validation.request;
    const target = { clientId: request.clientId, redirectUri: request.redirectUri, responseMode: request.responseMode, state: request.state };
    try {
      const { agentId, headers } = ensureAgentCookie(ctx, agent);
      const hint = hintedUser(ctx, request);
      const sessionsOfAgent = await usableSessions(ctx, agent.agentId, request);
      const candidates = hint.userId ? sessionsOfAgent.filter((s) => s.userId === hint.userId) : sessionsOfAgent;

      if (request.prompt.has('none')) {
        // OIDC Core §3.1.2.6: no UI at all; the only usable session answers, or an error does.
        if (candidates.length === 0) return authorizeError(ctx, target, 'login_required', 'the user is not signed in', agent.locale, headers);
        if (candidates.length > 1) return authorizeError(ctx, target, 'interaction_required', 'more than one session: the user must choose an account', agent.locale, headers);
        const requirement = sessionRequirementOf(ctx, candidates[0]!, request);
        if (requirement === 'mfa-setup') return authorizeError(ctx, target, 'interaction_required', 'the login policy requires the user to set up a second factor', agent.locale, headers);
        if (requirement !== 'ok') return authorizeError(ctx, target, 'login_required', 'the authentication is older than max_age or the login policy allows', agent.locale, headers);
        return await completeAuthorization(ctx, request, candidates[0]!, agent.locale, headers);
      }

      let step: LoginStep;
      let userId = hint.userId;
      let checks: AuthChecks | undefined;
      if (request.prompt.has('create')) {
        step = 'register';
      } else if (request.prompt.has('select_account')) {
        step = sessionsOfAgent.length > 0 ? 'select' : 'loginname';
      } else if (request.maxAge === 0 || request.prompt.has('login')) {
        step = userId ? 'password' : 'loginname';
      } else {
        // Without prompt, one session answers at once; with more the user must choose, a hinted user's first (docs/compatibility.md §6.3).
        const start = startFromSessions(ctx, hint.userId ? candidates.slice(0, 1) : candidates, request);
        if (start && 'answer' in start) {
          if (!(await consentNeeded(ctx, request, start.answer.userId))) return await completeAuthorization(ctx, request, start.answer, agent.locale, headers, true);
          // Signed in already, but a self-registered client is asked about first.
          const consent = await ctx.authRequests.create(agentId, request, agent.locale, 'consent', {
            userId: start.answer.userId,
            consentSid: start.answer.id,
            address: addressLimitKey(req.peer ?? ''),
          });
          return redirectResponse(`${LOGIN_PATH}?authRequestID=${consent.id}`, headers);
        }
        if (!start) step = userId ? 'password' : 'loginname';
        else {
          step = start.step;
          if (start.userId) userId = start.userId;
          checks = start.checks;
        }
      }
      const created = await ctx.authRequests.create(agentId, request, agent.locale, step, {
        userId,
        loginName: hint.loginName,
        ...(checks ? { checks } : {}),
        address: addressLimitKey(req.peer ?? ''),
      });
      return redirectResponse(`${LOGIN_PATH}?authRequestID=${created.id}`, headers);
    } catch (error) {
      // A thread that cannot go on hands the request over whole (nothing was changed before that).
      if (error instanceof NeedsOwner) throw error;
      log.error('authorization failed', { error: error instanceof Error ? error.stack : String(error) });
      return authorizeError(ctx, target, 'server_error', 'unexpected condition', agent.locale);
    }
  };
  return { pattern: PATHS.authorization, errorStyle: 'html', peerAddress: true, methods: { GET: handle, POST: handle } };
}
