import { api, basicAuth, createApiApp } from './api.js';
import type { ServerAddress } from './server.js';
import type { Connection } from './connection.js';

/**
 * Helpers for browser sign-in tests without a browser: an OIDC app and a human user provisioned
 * through the management API, and a tiny cookie-keeping user agent that walks the login forms.
 */
export interface WebApp {
  projectId: string;
  appId: string;
  clientId: string;
  clientSecret: string;
}

export interface AppOptions {
  name?: string;
  projectId?: string;
  redirectUris?: string[];
  postLogoutRedirectUris?: string[];
  responseTypes?: string[];
  grantTypes?: string[];
  appType?: string;
  authMethodType?: string;
  accessTokenType?: string;
  devMode?: boolean;
  idTokenUserinfoAssertion?: boolean;
  idTokenRoleAssertion?: boolean;
  skipNativeAppSuccessPage?: boolean;
  accessTokenRoleAssertion?: boolean;
  additionalOrigins?: string[];
  accessTokenLifetime?: string;
  idTokenLifetime?: string;
  refreshTokenIdleExpiration?: string;
  refreshTokenExpiration?: string;
  requirePushedAuthorizationRequests?: boolean;
  dpopBoundAccessTokens?: boolean;
  backChannelLogoutUri?: string;
}

let counter = 0;
export const uniqueName = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++counter}`;

/** The OIDC settings createWebApp gives an app (a confidential web app of the code flow), with `changes`. */
export function webAppConfig(changes: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    redirectUris: ['http://localhost:9999/callback'],
    postLogoutRedirectUris: ['http://localhost:9999/signed-out'],
    responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
    grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'],
    appType: 'OIDC_APP_TYPE_WEB',
    authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
    ...changes,
  };
}

export async function createWebApp(server: ServerAddress, options: AppOptions = {}): Promise<WebApp> {
  let projectId = options.projectId;
  if (!projectId) {
    const project = await api(server, 'POST', '/management/v1/projects', { token: server.pat, body: { name: uniqueName('project') } });
    if (project.status !== 200) throw new Error(`add project: ${project.status} ${JSON.stringify(project.body)}`);
    projectId = project.body.id as string;
  }
  const { name, projectId: _ignored, ...config } = options;
  const app = await api(server, 'POST', `/management/v1/projects/${projectId}/apps/oidc`, {
    token: server.pat,
    body: { name: name ?? uniqueName('web'), ...webAppConfig(config) },
  });
  if (app.status !== 200) throw new Error(`add oidc app: ${app.status} ${JSON.stringify(app.body)}`);
  return { projectId, appId: app.body.appId, clientId: app.body.clientId, clientSecret: app.body.clientSecret };
}

export interface Human {
  userId: string;
  userName: string;
  loginName: string;
  password: string;
}

export async function createHuman(
  server: ServerAddress,
  options: { userName?: string; password?: string; otpSecret?: string; orgId?: string; firstName?: string; phone?: string } = {},
): Promise<Human> {
  const userName = options.userName ?? uniqueName('person');
  const password = options.password ?? 'Correct-Horse-9';
  const res = await api(server, 'POST', '/management/v1/users/human/_import', {
    token: server.pat,
    orgId: options.orgId,
    body: {
      userName,
      profile: { firstName: options.firstName ?? 'Ada', lastName: 'Lovelace', preferredLanguage: 'en' },
      email: { email: `${userName}@example.com`, isEmailVerified: true },
      ...(options.phone ? { phone: { phone: options.phone, isPhoneVerified: true } } : {}),
      password,
      ...(options.otpSecret ? { otpCode: options.otpSecret } : {}),
    },
  });
  if (res.status !== 200) throw new Error(`import human: ${res.status} ${JSON.stringify(res.body)}`);
  const user = await api(server, 'GET', `/management/v1/users/${res.body.userId}`, { token: server.pat, orgId: options.orgId });
  return { userId: res.body.userId, userName, loginName: user.body.user.preferredLoginName, password };
}

/** A minimal user agent: keeps cookies, never follows redirects by itself. */
export class Agent {
  readonly cookies = new Map<string, string>();

  /** `connection`: every request over that one kept-alive connection (so one HTTP thread serves them all). */
  constructor(
    private readonly server: ServerAddress,
    private readonly connection?: Connection,
  ) {}

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async fetch(url: string, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = { ...init.headers };
    if (this.cookies.size > 0) headers.cookie = this.cookieHeader();
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const absolute = url.startsWith('/') ? this.server.url + url : url;
    const method = init.method ?? (init.form ? 'POST' : 'GET');
    const res = this.connection ? await this.overConnection(this.connection, method, absolute, headers, body) : await fetch(absolute, { method, headers, body, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
    return res;
  }

  private async overConnection(connection: Connection, method: string, url: string, headers: Record<string, string>, body: string | undefined): Promise<Response> {
    const { pathname, search } = new URL(url);
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    const answer = await connection.send(method, pathname + search, headers, body);
    const answerHeaders = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) for (const v of [value ?? []].flat()) answerHeaders.append(name, v);
    return new Response(answer.status === 204 || answer.status === 304 ? null : answer.text, { status: answer.status, headers: answerHeaders });
  }

  /**
   * Follows redirects within Sesame; stops at a page (returned with its HTML) or a redirect
   * leaving Sesame (returned with its Location).
   */
  async follow(url: string, init: { form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Step> {
    let res = await this.fetch(url, init);
    for (let hops = 0; hops < 10; hops++) {
      const location = res.headers.get('location');
      if (res.status < 300 || res.status >= 400 || !location) return { status: res.status, html: await res.text(), headers: res.headers };
      const next = new URL(location, this.server.url);
      if (next.origin !== new URL(this.server.url).origin && next.origin !== new URL(this.server.issuer).origin) {
        return { status: res.status, location: next.toString(), headers: res.headers };
      }
      res = await this.fetch(next.pathname + next.search, init.headers ? { headers: init.headers } : {});
    }
    throw new Error('too many redirects');
  }
}

export interface Step {
  status: number;
  html?: string;
  location?: string;
  headers: Headers;
}

/** The hidden fields and action of the (first) form on a page. */
export function formOf(html: string, action?: string): { action: string; fields: Record<string, string> } {
  const forms = [...html.matchAll(/<form method="post" action="([^"]+)">([\s\S]*?)<\/form>/g)];
  const form = action ? forms.find((f) => f[1] === action) : forms[0];
  if (!form) throw new Error(`no form${action ? ` ${action}` : ''} in page:\n${html.slice(0, 2000)}`);
  const fields: Record<string, string> = {};
  for (const m of form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]!] = unescapeHtml(m[2]!);
  return { action: unescapeHtml(form[1]!), fields };
}

function unescapeHtml(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** Submits the page's form for `action` with extra fields. */
export function submit(agent: Agent, page: Step, action: string, fields: Record<string, string>): Promise<Step> {
  if (!page.html) throw new Error(`expected a page, got a redirect to ${page.location}`);
  const form = formOf(page.html, action);
  return agent.follow(form.action, { form: { ...form.fields, ...fields } });
}

/**
 * Walks login name → password (→ TOTP) from an authorization URL, and allows a self-registered
 * client at its consent step (as the person who signs in to it does); returns the final step.
 */
export async function signIn(agent: Agent, authorizeUrl: string, user: { loginName: string; password: string }, totp?: () => string): Promise<Step> {
  let page = await agent.follow(authorizeUrl);
  if (page.html?.includes('action="/ui/login/loginname"')) page = await submit(agent, page, '/ui/login/loginname', { loginName: user.loginName });
  if (page.html?.includes('action="/ui/login/password"')) page = await submit(agent, page, '/ui/login/password', { password: user.password });
  if (totp && page.html?.includes('action="/ui/login/otp"')) page = await submit(agent, page, '/ui/login/otp', { code: totp() });
  if (page.html?.includes('action="/ui/login/consent"')) page = await submit(agent, page, '/ui/login/consent', { decision: 'allow' });
  return page;
}

/**
 * The URL of the link on Sesame's page to a client it does not send the browser to by itself (a
 * self-registered client's error, a post-logout URI without an id_token_hint).
 */
export function continueLink(page: Step): string {
  const href = /<a class="button" href="([^"]+)">/.exec(page.html ?? '')?.[1];
  if (href === undefined) throw new Error(`no link to the client on the page (status ${page.status}, location ${page.location}):\n${page.html?.slice(0, 2000)}`);
  return unescapeHtml(href);
}

/** Parameters of a redirect to the client, from its query or fragment. */
export function responseParams(location: string): URLSearchParams {
  const url = new URL(location);
  return new URLSearchParams(url.hash ? url.hash.slice(1) : url.search);
}

/** Exchanges the code of a redirect to the client (client_secret_basic): the token response and the ID token's claims. */
export async function exchangeCode(
  server: Pick<ServerAddress, 'url'>,
  app: WebApp,
  location: string,
  redirectUri = 'http://localhost:9999/callback',
): Promise<{ status: number; id_token: string; access_token: string; refresh_token?: string; claims: Record<string, any> }> {
  const res = await fetch(`${server.url}/oauth/v2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: responseParams(location).get('code')!, redirect_uri: redirectUri }).toString(),
  });
  const body = (await res.json()) as { id_token: string; access_token: string; refresh_token?: string };
  const claims = body.id_token ? (JSON.parse(Buffer.from(body.id_token.split('.')[1]!, 'base64url').toString()) as Record<string, any>) : {};
  return { status: res.status, ...body, claims };
}

/**
 * Token exchange switched on, an API app in a new project (its Basic credentials introspect) and a
 * web app there with the code, refresh and token-exchange grants; `projectAud` asks for the project.
 */
export async function tokenExchangeFixture(server: ServerAddress, name: string): Promise<{ web: WebApp; introspector: string; projectAud: string }> {
  const on = await api(server, 'PUT', '/v2/features/instance', { token: server.pat, body: { oidcTokenExchange: true } });
  if (on.status !== 200) throw new Error(`feature oidcTokenExchange: ${on.status} ${JSON.stringify(on.body)}`);
  const apiApp = await createApiApp(server, uniqueName(name));
  const web = await createWebApp(server, {
    projectId: apiApp.projectId,
    grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN', 'OIDC_GRANT_TYPE_TOKEN_EXCHANGE'],
  });
  return { web, introspector: basicAuth(apiApp.clientId, apiApp.clientSecret), projectAud: `urn:zitadel:iam:org:project:id:${apiApp.projectId}:aud` };
}

/** A person signed in to a web app (code flow, a new browser unless given): the token response, the ID token's claims, and the browser. */
export async function codeFlowTokens(server: ServerAddress, app: WebApp, person: { loginName: string; password: string }, scope: string, agent = new Agent(server)) {
  const params = new URLSearchParams({ client_id: app.clientId, redirect_uri: 'http://localhost:9999/callback', response_type: 'code', scope });
  const done = await signIn(agent, `/oauth/v2/authorize?${params}`, person);
  if (!done.location) throw new Error(`no redirect to the app after the sign-in:\n${done.html?.slice(0, 2000)}`);
  const tokens = await exchangeCode(server, app, done.location);
  if (tokens.status !== 200) throw new Error(`code exchange: ${tokens.status} ${JSON.stringify(tokens)}`);
  return { ...tokens, agent };
}

/** A device app (RFC 8628): native, public; a response type needs its grant (ZITADEL's IsValid), so it keeps the code flow too. */
export const DEVICE_APP = {
  appType: 'OIDC_APP_TYPE_NATIVE',
  authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
  redirectUris: ['http://127.0.0.1/callback'],
  grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_DEVICE_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'],
};

/** Walks the device page from verification_uri_complete as a browser would: the code form (filled in from the link), then the login. */
export async function enterDeviceCode(agent: Agent, verificationUriComplete: string, who: { loginName: string; password: string }): Promise<Step> {
  const url = new URL(verificationUriComplete);
  let page = await agent.follow(url.pathname + url.search);
  if (page.status !== 200) throw new Error(`device page: ${page.status}`);
  const userCode = /id="user_code" name="user_code"[^>]* value="([^"]*)"/.exec(page.html ?? '')?.[1] ?? '';
  page = await submit(agent, page, '/ui/login/device', { user_code: userCode });
  if (page.html?.includes('action="/ui/login/loginname"')) page = await submit(agent, page, '/ui/login/loginname', { loginName: who.loginName });
  if (page.html?.includes('action="/ui/login/password"')) page = await submit(agent, page, '/ui/login/password', { password: who.password });
  return page;
}
