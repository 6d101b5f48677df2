import { revocationHorizon } from '../../services/user-tokens.js';
import { endSessions, type SessionEndPorts } from '../../services/session-end.js';
import type { UserSession } from '../../actors/user-sessions.js';
import { agentOf } from '../login/agent.js';
import { postLogoutUriAllowed } from '../../protocol/authorize/redirect-uri.js';
import { PATHS } from '../../protocol/discovery.js';
import { formBodyText, parseUrlEncoded } from '../../protocol/form.js';
import { errorPage, signedOutPage } from '../../ui/pages.js';
import type { FlowView } from '../../services/ports.js';
import { htmlResponse, redirectResponse } from '../html.js';
import type { Request, Response, Route } from '../types.js';
import type { AgentPorts } from '../login/agent.js';
import type { View } from '../../util/readonly.js';

/** What this module uses of the wired parts (src/app.ts). */
export type EndSessionPorts = Pick<FlowView, 'clients' | 'config' | 'idTokens' | 'orgs' | 'issuedTokens' | 'userSessions'> & SessionEndPorts & AgentPorts;

/**
 * GET|POST /oidc/v1/end_session (OIDC RP-Initiated Logout 1.0; docs/compatibility.md §5.4).
 * Ends the user sessions of this browser (all of them, or the one that `logout_hint` or the
 * hint's `sid` selects), revokes every token issued in them, queues a back-channel logout for
 * the apps that received tokens in them (delivered in the background), then redirects to a registered
 * post_logout_redirect_uri of the client named by the hint's `azp`, or shows the signed-out page
 * (with a link to the URI of a client named by `client_id` alone).
 */
export function endSessionRoute(ctx: EndSessionPorts): Route {
  const handle = async (req: Request): Promise<Response> => {
    const params = parseUrlEncoded(req.method === 'POST' ? formBodyText(req.headers['content-type'], req.body) : req.query);
    const agent = agentOf(ctx, req, params.get('ui_locales'));
    const bad = (message: string) => htmlResponse(400, errorPage(agent.locale, message));

    const hint = params.get('id_token_hint');
    let hinted: Record<string, unknown> | undefined;
    if (hint !== undefined) {
      hinted = ctx.idTokens.verifyHint(hint);
      if (!hinted) return bad('id_token_hint invalid');
    }
    const azp = typeof hinted?.azp === 'string' ? hinted.azp : undefined;
    const clientId = params.get('client_id');
    if (clientId !== undefined && azp !== undefined && clientId !== azp) return bad('client_id does not match the azp of the id_token_hint');
    const app = ctx.clients.appByClient(azp ?? clientId ?? '');

    // The redirect is checked against the client's registered URIs, and ignored when no client is known (docs/compatibility.md §5.4).
    let redirect: string | undefined;
    const requested = params.get('post_logout_redirect_uri');
    if (requested !== undefined && app?.oidc) {
      if (!postLogoutUriAllowed(app.oidc, requested)) return bad('post_logout_redirect_uri is not registered for this client');
      redirect = requested;
    }

    const agentSessions = await ctx.userSessions.ofAgent(agent.agentId);
    let ending: View<UserSession>[];
    const logoutHint = params.get('logout_hint');
    if (logoutHint !== undefined) {
      const user = ctx.orgs.findUserByLoginName(logoutHint);
      ending = agentSessions.filter((s) => s.userId === user?.id);
    } else if (typeof hinted?.sid === 'string') {
      const session = await ctx.userSessions.get(hinted.sid);
      // The hint proves the client held a token of that session, so it may end it from any browser.
      ending = session ? [session] : [];
      if (!session) await ctx.issuedTokens.revokeSession(hinted.sid, revocationHorizon(ctx));
    } else {
      ending = agentSessions;
    }
    await endSessions(ctx, ending, { address: req.peer });

    if (!redirect || !app) return htmlResponse(200, signedOutPage(agent.locale));
    const url = new URL(redirect);
    const state = params.get('state');
    if (state !== undefined) url.searchParams.set('state', state);
    // RP-Initiated Logout 1.0 §3: without an ID token the client was issued, nothing shows that the
    // client asked (anyone may send client_id), and a redirect at once would make Sesame an open
    // redirector to whatever URI a self-registered client registered. The person gets a link instead.
    if (azp !== app.clientId) {
      return htmlResponse(200, signedOutPage(agent.locale, { clientName: app.name, selfRegistered: app.registration !== undefined, continueTo: { href: url.toString() } }));
    }
    return redirectResponse(url.toString());
  };
  // The browser's address: the activity log's record of where a sign-out came from.
  return { pattern: PATHS.endSession, errorStyle: 'html', peerAddress: true, methods: { GET: handle, POST: handle } };
}
