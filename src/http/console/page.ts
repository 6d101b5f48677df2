import type { MasterKey } from '../../crypto/master-key.js';
import { parseFormBody, type Form } from '../../protocol/form.js';
import { uploadedForm } from '../multipart.js';
import { chooseLocale, type Locale } from '../../ui/i18n.js';
import { consolePage, type ConsoleFrame, type NavKey, type Notice } from '../../ui/console/layout.js';
import { consoleTranslator, type ConsoleTranslate } from '../../ui/console/texts.js';
import { standalonePage } from '../../ui/console/layout.js';
import { html, type Html } from '../../util/html.js';
import { consoleHtmlResponse, redirectResponse } from '../html.js';
import type { Method, Request, Response, Route } from '../types.js';
import { ApiProblem, type ApiCaller, type InProcessApi } from './api.js';
import { clearConsoleCookie, consoleCookies, consoleCsrf, consoleCsrfValid, sessionOf, type ConsoleSession } from './session.js';

/**
 * One console request: the signed-in session, the API as that person, the reader's language, and
 * the page frame. `consoleRoute` opens the session (or sends the browser to sign in), checks the
 * CSRF token of every form, and maps the API's refusals: a 401 (the token died with its session,
 * its user or its grant) ends the console session; anything else shows on the page.
 */
export interface ConsoleCall {
  req: Request;
  session: ConsoleSession;
  api: ApiCaller;
  locale: Locale;
  t: ConsoleTranslate;
  csrf: string;
  /** The posted form (POST only; empty on GET). */
  form: Form;
  /** The uploaded file of a form with one (a route made with `upload`). */
  file?: Uint8Array;
  /** A page in the signed-in frame. */
  page(current: NavKey, title: string, body: Html, notice?: Notice, status?: number): Promise<Response>;
}

export type ConsoleHandler = (call: ConsoleCall) => Promise<Response>;

export interface ConsoleKit {
  masterKey: MasterKey;
  issuer: string;
  api: InProcessApi;
  csrfKey: Buffer;
}

interface MyUser {
  user: { id: string; userName: string; preferredLoginName?: string; human?: { profile?: { displayName?: string } }; machine?: { name?: string }; details?: { resourceOwner?: string } };
}
interface OrgList {
  result?: { id: string; name: string }[];
}
interface Memberships {
  result?: { iam?: boolean; orgId?: string; roles: string[] }[];
}

const EMPTY_FORM: Form = Object.assign(new Map<string, string>(), { all: () => [] as readonly string[] });

export function localeOf(req: Request): Locale {
  return chooseLocale(undefined, req.headers['accept-language']);
}

/** "Done." after a form's redirect: `?done` is the only notice a URL carries (no text from it reaches the page). */
export function doneNotice(req: Request, t: ConsoleTranslate): Notice | undefined {
  return new URLSearchParams(req.query).has('done') ? { kind: 'info', text: t('common.done') } : undefined;
}

/** Back to a console page after a form succeeded (303: the browser GETs it). */
export function seeOther(path: string): Response {
  return redirectResponse(`${path}${path.includes('?') ? '&' : '?'}done`, {}, 303);
}

export async function frameOf(call: Pick<ConsoleCall, 'api' | 'session' | 'locale' | 't' | 'csrf'>, current: NavKey): Promise<ConsoleFrame> {
  const [me, orgs, memberships] = await Promise.all([
    call.api.call<MyUser>('GET', '/auth/v1/users/me'),
    call.api.call<OrgList>('POST', '/auth/v1/global/projectorgs/_search', [], { query: { limit: 1000, asc: true }, sortingColumn: 'ORG_FIELD_NAME_NAME' }),
    call.api.call<Memberships>('POST', '/auth/v1/memberships/me/_search', [], { query: { limit: 1000, asc: true } }),
  ]);
  const user = me.user;
  const name = user.human?.profile?.displayName || user.machine?.name || user.preferredLoginName || user.userName;
  const list = orgs.result ?? [];
  const org = list.find((o) => o.id === call.session.orgId) ?? { id: call.session.orgId, name: call.session.orgId };
  return {
    locale: call.locale,
    t: call.t,
    csrf: call.csrf,
    userName: name,
    org,
    orgs: list,
    instance: (memberships.result ?? []).some((m) => m.iam === true),
    current,
  };
}

export function consoleRoute(kit: ConsoleKit, pattern: string, methods: Partial<Record<'GET' | 'POST', ConsoleHandler>>, options: { upload?: number } = {}): Route {
  const cookies = consoleCookies(kit.issuer);
  const wrapped: Partial<Record<Method, (req: Request) => Promise<Response>>> = {};
  for (const [method, handler] of Object.entries(methods) as ['GET' | 'POST', ConsoleHandler][]) {
    wrapped[method] = async (req) => {
      const locale = localeOf(req);
      const t = consoleTranslator(locale);
      const session = sessionOf(kit.masterKey, cookies.session, req.headers.cookie);
      if (!session) {
        // A form posted after the session ended cannot be replayed: the person starts from the page.
        const returnTo = method === 'GET' ? req.path : '/ui/console';
        return redirectResponse(`/ui/console/login?returnTo=${encodeURIComponent(returnTo)}`, {}, method === 'GET' ? 302 : 303);
      }
      const csrf = consoleCsrf(kit.csrfKey, session);
      let form = EMPTY_FORM;
      let file: Uint8Array | undefined;
      if (method === 'POST') {
        if (options.upload !== undefined) {
          // A form with a file (multipart): its text fields are the form, the CSRF token among them.
          const uploaded = await uploadedForm(req, options.upload);
          form = Object.assign(new Map(uploaded.fields), { all: (name: string) => (uploaded.fields.has(name) ? [uploaded.fields.get(name)!] : []) });
          file = uploaded.file;
        } else {
          form = parseFormBody(req.headers['content-type'], req.body);
        }
        if (!consoleCsrfValid(kit.csrfKey, session, form.get('csrf'))) {
          return consoleHtmlResponse(403, standalonePage(locale, t, t('error.csrf'), html`<p><a href="/ui/console">${t('nav.home')}</a></p>`));
        }
      }
      const api = kit.api.as(session.accessToken, session.orgId, req.peer);
      const call: ConsoleCall = {
        req,
        session,
        api,
        locale,
        t,
        csrf,
        form,
        ...(file ? { file } : {}),
        page: async (current, title, body, notice, status = 200) => consoleHtmlResponse(status, consolePage(await frameOf(call, current), title, body, notice)),
      };
      try {
        return await handler(call);
      } catch (error) {
        if (!(error instanceof ApiProblem)) throw error;
        if (error.status === 401) {
          return redirectResponse(`/ui/console/login?returnTo=${encodeURIComponent(method === 'GET' ? req.path : '/ui/console')}`, { 'Set-Cookie': clearConsoleCookie(cookies.session) }, 303);
        }
        // A refusal of the page's own read (a 403, a 404): shown in the frame, with the API's reason.
        const title = error.status === 403 ? t('error.forbidden') : error.status === 404 ? t('error.notFound') : t('error.failed');
        try {
          return await call.page('home', title, html``, { kind: 'error', text: error.message }, error.status);
        } catch {
          // The frame's own reads failed too (the token died meanwhile): the refusal on a page of its own.
          return consoleHtmlResponse(error.status, standalonePage(locale, t, title, html`<p class="notice error">${error.message}</p><p><a href="/ui/console">${t('nav.home')}</a></p>`));
        }
      }
    };
  }
  // The browser's address: the activity log's record of where a change came from.
  return { pattern, errorStyle: 'html', methods: wrapped, peerAddress: true, ...(options.upload !== undefined ? { maxBody: options.upload + 64 * 1024 } : {}) };
}

/** Runs a form's API call; a refusal shows on the page the form came from. */
export async function acting(act: () => Promise<Response>, onProblem: (problem: ApiProblem) => Promise<Response>): Promise<Response> {
  try {
    return await act();
  } catch (error) {
    if (error instanceof ApiProblem && error.status !== 401) return onProblem(error);
    throw error;
  }
}

/** A textarea's entries, one a line (redirect URIs, origins, scopes): trimmed, blank lines left out. */
export function formLines(text: string | undefined): string[] {
  return (text ?? '')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}
