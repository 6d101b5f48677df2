import { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import { PATHS } from '../../protocol/discovery.js';
import { CONSOLE_CLIENT_ID, CONSOLE_PATHS } from '../../services/console-app.js';
import { standalonePage } from '../../ui/console/layout.js';
import { consoleTranslator } from '../../ui/console/texts.js';
import { clock } from '../../util/clock.js';
import { html } from '../../util/html.js';
import { consoleHtmlResponse, redirectResponse } from '../html.js';
import type { Request, Response, Route } from '../types.js';
import { ApiProblem } from './api.js';
import { localeOf, type ConsoleKit } from './page.js';
import { clearConsoleCookie, consoleCookies, consoleCsrfValid, randomToken, sealed, sealedSession, sessionOf, setConsoleCookie, signInOf, SIGN_IN_MS, type ConsoleSession } from './session.js';
import { parseFormBody } from '../../protocol/form.js';

/**
 * The console signs people in as any relying party does: the code flow with PKCE (S256), state and
 * nonce, through Sesame's own login; the code is exchanged at the token endpoint's own route in
 * this thread. Signing out ends the login session too (RP-initiated logout with the ID token).
 */
const SCOPES = 'openid profile email';

/** Only a console page comes back from `returnTo` (no open redirect; not the sign-in's own paths). */
function consolePath(value: string | null): string {
  if (!value || !/^\/ui\/console(\/[A-Za-z0-9_\-/]*)?$/.test(value)) return CONSOLE_PATHS.home;
  return /^\/ui\/console\/(login|logout|auth|signedout|resources)(\/|$)/.test(value) ? CONSOLE_PATHS.home : value;
}

export function signInRoutes(kit: ConsoleKit): Route[] {
  const cookies = consoleCookies(kit.issuer);
  const failed = (req: Request, reason: string, status = 400): Response => {
    const locale = localeOf(req);
    const t = consoleTranslator(locale);
    return consoleHtmlResponse(status, standalonePage(locale, t, t('error.signIn', { reason }), html`<p><a href="/ui/console/login">${t('signedOut.again')}</a></p>`), {
      'Set-Cookie': clearConsoleCookie(cookies.signIn),
    });
  };

  const start = async (req: Request): Promise<Response> => {
    const returnTo = consolePath(new URLSearchParams(req.query).get('returnTo'));
    const state = randomToken();
    const nonce = randomToken();
    const verifier = randomToken() + randomToken();
    const until = clock.now() + SIGN_IN_MS;
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const params = new URLSearchParams({
      client_id: CONSOLE_CLIENT_ID,
      redirect_uri: kit.issuer + CONSOLE_PATHS.callback,
      response_type: 'code',
      scope: SCOPES,
      state,
      nonce,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    // `again`: a fresh sign-in even where the browser has a session (a change that takes a recent one,
    // domain/recent-sign-in.ts), of the person named by `loginHint` (the login then asks their password).
    const query = new URLSearchParams(req.query);
    if (query.has('again')) params.set('prompt', 'login');
    const hint = query.get('loginHint');
    if (hint) params.set('login_hint', hint.slice(0, 200));
    const locale = new URLSearchParams(req.query).get('ui_locales');
    if (locale) params.set('ui_locales', locale.slice(0, 50));
    return redirectResponse(`${PATHS.authorization}?${params}`, {
      'Set-Cookie': setConsoleCookie(cookies.signIn, sealed(kit.masterKey, { purpose: 'console-sign-in', state, nonce, verifier, returnTo, until }), until),
    });
  };

  const callback = async (req: Request): Promise<Response> => {
    const query = new URLSearchParams(req.query);
    const signIn = signInOf(kit.masterKey, cookies.signIn, req.headers.cookie);
    // The callback is the issuer's: a sign-in started at another address of this server left its cookie there.
    if (!signIn) return failed(req, `no sign-in is under way in this browser (it took longer than 30 minutes, or the console was opened at another address than ${kit.issuer}/ui/console)`);
    const error = query.get('error');
    if (error) return failed(req, `${error}: ${(query.get('error_description') ?? '').slice(0, 300)}`);
    if (query.get('state') !== signIn.state) return failed(req, 'the state does not match this browser’s sign-in');
    const code = query.get('code');
    if (!code) return failed(req, 'the answer carries no code');

    const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: kit.issuer + CONSOLE_PATHS.callback, client_id: CONSOLE_CLIENT_ID, code_verifier: signIn.verifier });
    const answer = await kit.api.answer('POST', PATHS.token, [], { 'content-type': 'application/x-www-form-urlencoded' }, Buffer.from(form.toString()), req.peer);
    let tokens: { access_token?: unknown; id_token?: unknown; expires_in?: unknown; error?: unknown; error_description?: unknown };
    try {
      tokens = JSON.parse(String(answer.body ?? '{}')) as typeof tokens;
    } catch {
      tokens = {};
    }
    if (answer.status !== 200 || typeof tokens.access_token !== 'string' || typeof tokens.id_token !== 'string') {
      return failed(req, `the token endpoint refused the code: ${String(tokens.error_description ?? tokens.error ?? answer.status)}`);
    }
    // Our own token endpoint's answer, in this thread: the ID token is read, not verified again; the nonce binds it to this sign-in.
    const claims = decodeJwt(tokens.id_token);
    if (claims.nonce !== signIn.nonce || typeof claims.sub !== 'string') return failed(req, 'the ID token does not belong to this sign-in');
    const expiresIn = typeof tokens.expires_in === 'number' && tokens.expires_in > 0 ? tokens.expires_in : 300;
    const until = clock.now() + expiresIn * 1000;
    let orgId: string;
    try {
      const me = await kit.api.as(tokens.access_token, '', req.peer).call<{ user: { details?: { resourceOwner?: string } } }>('GET', '/auth/v1/users/me');
      orgId = me.user.details?.resourceOwner ?? '';
    } catch (problem) {
      if (problem instanceof ApiProblem) return failed(req, problem.message, 403);
      throw problem;
    }
    const loginSession = typeof claims.sid === 'string' ? claims.sid : '';
    const session: ConsoleSession = { purpose: 'console-session', sid: randomToken(), accessToken: tokens.access_token, idToken: tokens.id_token, loginSession, orgId, until };
    // A new session cookie at each sign-in (never one a page had before). The sign-in's cookie is
    // left to expire: its state is spent with the code, which the token endpoint takes once.
    return redirectResponse(signIn.returnTo, { 'Set-Cookie': setConsoleCookie(cookies.session, sealedSession(kit.masterKey, session), until) });
  };

  const signOut = async (req: Request): Promise<Response> => {
    const session = sessionOf(kit.masterKey, cookies.session, req.headers.cookie);
    const form = parseFormBody(req.headers['content-type'], req.body);
    if (!session || !consoleCsrfValid(kit.csrfKey, session, form.get('csrf'))) return redirectResponse(CONSOLE_PATHS.signedOut, { 'Set-Cookie': clearConsoleCookie(cookies.session) }, 303);
    // Without the ID token (see sealedSession) the client id names the app; the login session of this browser ends all the same.
    const params = new URLSearchParams(session.idToken ? { id_token_hint: session.idToken, post_logout_redirect_uri: kit.issuer + CONSOLE_PATHS.signedOut } : { client_id: CONSOLE_CLIENT_ID });
    return redirectResponse(`${PATHS.endSession}?${params}`, { 'Set-Cookie': clearConsoleCookie(cookies.session) }, 303);
  };

  const signedOut = async (req: Request): Promise<Response> => {
    const locale = localeOf(req);
    const t = consoleTranslator(locale);
    return consoleHtmlResponse(200, standalonePage(locale, t, t('signedOut.title'), html`<p>${t('signedOut.text')}</p><p><a class="button" href="/ui/console/login">${t('signedOut.again')}</a></p>`), {
      'Set-Cookie': clearConsoleCookie(cookies.session),
    });
  };

  const route = (pattern: string, methods: Route['methods']): Route => ({ pattern, errorStyle: 'html', methods, peerAddress: true });
  return [
    route('/ui/console/login', { GET: start }),
    route(CONSOLE_PATHS.callback, { GET: callback }),
    route('/ui/console/logout', { POST: signOut }),
    route(CONSOLE_PATHS.signedOut, { GET: signedOut }),
  ];
}
