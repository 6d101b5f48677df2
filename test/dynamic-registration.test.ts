import { generateKeyPairSync } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import * as oauth from 'oauth4webapi';
import { importPKCS8, SignJWT } from 'jose';
import { api } from './helpers/api.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { Agent, continueLink, createHuman, createWebApp, formOf, responseParams, signIn, submit, uniqueName, type Human } from './helpers/oidc.js';
import { tempDataDir, type ServerAddress } from './helpers/server.js';

/**
 * Dynamic client registration (RFC 7591) and its management (RFC 7592) with openid-client and
 * oauth4webapi as registrants: the instance setting, discovery, initial access tokens, open
 * registration limited per address, a code flow with the registered client, every error code,
 * hostile bodies, the management API's view, and registrations across a restart.
 */
let server: InProcessServer;
const clock = new TestClock();
let orgId: string;
let projectId: string;
let person: Human;
const REDIRECT = 'http://localhost:9999/callback';
const SETTINGS = '/admin/v1/settings/dynamic_client_registration';
const INSECURE = { [oauth.allowInsecureRequests]: true } as const;

async function newProject(target: ServerAddress): Promise<string> {
  const project = await api(target, 'POST', '/management/v1/projects', { token: target.pat, body: { name: uniqueName('registered') } });
  expect(project.status).toBe(200);
  return project.body.id;
}

async function ownOrg(target: ServerAddress): Promise<string> {
  return (await api(target, 'GET', '/management/v1/orgs/me', { token: target.pat })).body.org.id;
}

const setRegistration = (target: ServerAddress, body: Record<string, unknown>) => api(target, 'PUT', SETTINGS, { token: target.pat, body });

/** POST /oauth/v2/register with a JSON body (or raw text); the status, JSON body and headers. */
async function register(body: unknown, options: { token?: string; raw?: string; target?: ServerAddress } = {}) {
  const target = options.target ?? server;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const res = await fetch(`${target.url}/oauth/v2/register`, { method: 'POST', headers, body: options.raw ?? JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, any>) : undefined, headers: res.headers };
}

/** An RFC 7592 call on the registration client URI. */
async function manage(uri: string, method: 'GET' | 'PUT' | 'DELETE', token: string | undefined, body?: unknown) {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(uri, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, any>) : undefined, headers: res.headers };
}

async function discoveryDoc(target: ServerAddress = server): Promise<Record<string, unknown>> {
  return (await (await fetch(`${target.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
}

const WEB = { redirect_uris: [REDIRECT], client_name: 'Registered web app' };

beforeAll(async () => {
  server = await startInProcess({ clock });
  orgId = await ownOrg(server);
  projectId = await newProject(server);
  person = await createHuman(server);
});
afterAll(async () => {
  await server?.close();
});

describe('the setting', () => {
  it('is off by default: no discovery field, the endpoints answer 404', async () => {
    // Protojson style: false and empty values are left out.
    expect((await api(server, 'GET', SETTINGS, { token: server.pat })).body.settings).toEqual({ maxClients: 1000, registrationsPerAddressPerHour: 10 });
    expect(await discoveryDoc()).not.toHaveProperty('registration_endpoint');
    const res = await register(WEB, { token: server.pat });
    expect(res.status).toBe(404);
    expect(res.body!.error).toBe('invalid_request');
    expect((await manage(`${server.url}/oauth/v2/register/123`, 'GET', 'x')).status).toBe(404);
  });

  it('refuses enabling without an existing org and project, and callers other than the IAM owner', async () => {
    expect((await setRegistration(server, { enabled: true })).status).toBe(400);
    expect((await setRegistration(server, { enabled: true, orgId, projectId: 'nope' })).body.message).toContain('projectId');
    expect((await setRegistration(server, { enabled: true, orgId: 'nope', projectId })).body.message).toContain('orgId');
    expect((await setRegistration(server, { maxClients: 0 })).status).toBe(400);
    expect((await api(server, 'PUT', SETTINGS, { body: { enabled: true } })).status).toBe(401);
    expect((await api(server, 'GET', SETTINGS, { token: server.pat })).body.settings.enabled).toBeUndefined();
  });

  it('on: discovery lists registration_endpoint (also on a second HTTP thread)', async () => {
    expect((await setRegistration(server, { enabled: true, orgId, projectId })).status).toBe(200);
    expect((await api(server, 'GET', SETTINGS, { token: server.pat })).body.settings).toMatchObject({ enabled: true, orgId, projectId });
    expect((await discoveryDoc()).registration_endpoint).toBe(`${server.issuer}/oauth/v2/register`);
  });
});

describe('registration with an initial access token', () => {
  it('no token, a wrong token, a user without the role: 401 invalid_token / 403 insufficient_scope', async () => {
    const none = await register(WEB);
    expect(none.status).toBe(401);
    expect(none.body!.error).toBe('invalid_token');
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    const wrong = await register(WEB, { token: 'not-a-token' });
    expect(wrong.status).toBe(401);
    expect(wrong.body!.error).toBe('invalid_token');

    // A machine user with a PAT but no membership.
    const machine = await api(server, 'POST', '/management/v1/users/machine', { token: server.pat, body: { userName: uniqueName('nobody'), name: 'nobody' } });
    const pat = await api(server, 'POST', `/management/v1/users/${machine.body.userId}/pats`, { token: server.pat, body: {} });
    expect(pat.status).toBe(200);
    const denied = await register(WEB, { token: pat.body.token });
    expect(denied.status).toBe(403);
    expect(denied.body!.error).toBe('insufficient_scope');

    // As ORG_OWNER of the project's org, the same user may register.
    const member = await api(server, 'POST', '/management/v1/orgs/me/members', { token: server.pat, body: { userId: machine.body.userId, roles: ['ORG_OWNER'] } });
    expect(member.status).toBe(200);
    expect((await register(WEB, { token: pat.body.token })).status).toBe(201);
  });

  it('openid-client: registers with the admin PAT, then signs a person in with the registered client', async () => {
    const config = await oidc.dynamicClientRegistration(
      new URL(server.issuer),
      { redirect_uris: [REDIRECT], client_name: 'openid-client app', grant_types: ['authorization_code', 'refresh_token'], contacts: ['ops@example.com'] },
      undefined,
      { initialAccessToken: server.pat, execute: [oidc.allowInsecureRequests] },
    );
    const metadata = config.clientMetadata();
    expect(metadata.client_id).toMatch(/^\d+$/);
    expect(metadata.client_secret).toMatch(/^[A-Za-z0-9]{64}$/);
    expect(metadata).toMatchObject({
      token_endpoint_auth_method: 'client_secret_basic',
      client_secret_expires_at: 0,
      client_name: 'openid-client app',
      contacts: ['ops@example.com'],
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      application_type: 'web',
      registration_client_uri: `${server.issuer}/oauth/v2/register/${metadata.client_id}`,
    });
    expect(typeof metadata.registration_access_token).toBe('string');

    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid profile offline_access',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      prompt: 'consent',
    });
    const done = await signIn(new Agent(server), url.pathname + url.search, person);
    expect(done.location, done.html?.slice(0, 500)).toMatch(/^http:\/\/localhost:9999\/callback\?/);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.location!), { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.claims()!.sub).toBe(person.userId);
    expect(tokens.claims()!.aud).toContain(metadata.client_id);
    expect(tokens.refresh_token).toBeTruthy();
  });
});

describe('registered scope', () => {
  it('bounds what the client may ask for: other scopes are dropped at authorization (openid is always allowed)', async () => {
    const created = await register({ ...WEB, scope: 'email  offline_access' }, { token: server.pat });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body!.scope).toBe('email offline_access');
    const client = { clientId: created.body!.client_id as string, secret: created.body!.client_secret as string };
    const config = await oidc.discovery(new URL(server.issuer), client.clientId, client.secret, oidc.ClientSecretBasic(client.secret), { execute: [oidc.allowInsecureRequests] });
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid profile email phone',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 's',
    });
    const done = await signIn(new Agent(server), url.pathname + url.search, person);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.location!), { pkceCodeVerifier: verifier, expectedState: 's' });
    expect(tokens.scope).toBe('openid email');
    // RFC 7592 PUT replaces the metadata: without scope, no bound.
    const updated = await manage(created.body!.registration_client_uri, 'PUT', created.body!.registration_access_token, { client_id: client.clientId, redirect_uris: [REDIRECT] });
    expect(updated.status).toBe(200);
    expect(updated.body).not.toHaveProperty('scope');
  });
});

describe('consent to self-registered clients', () => {
  it('the person is asked once per scope set; deny, prompt=none and prompt=consent answer as OIDC Core says', async () => {
    const created = await register({ ...WEB, client_name: 'Curious app' }, { token: server.pat });
    const clientId = created.body!.client_id as string;
    const url = (scope: string, extra: Record<string, string> = {}) =>
      `/oauth/v2/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: REDIRECT, response_type: 'code', scope, state: 's', ...extra })}`;
    const agent = new Agent(server);
    let page = await agent.follow(url('openid profile'));
    page = await submit(agent, page, '/ui/login/loginname', { loginName: person.loginName });
    page = await submit(agent, page, '/ui/login/password', { password: person.password });
    // Signed in, then asked: the client's name, and that nobody vouches for it.
    expect(page.html).toContain('action="/ui/login/consent"');
    expect(page.html).toContain('Curious app');
    expect(page.html).toContain('registered itself');
    // Denied: the client hears it through a link on Sesame's page, never by a redirect (RFC 9700 §4.11.2).
    const denied = await submit(agent, page, '/ui/login/consent', { decision: 'deny' });
    expect(denied.location).toBeUndefined();
    expect(responseParams(continueLink(denied)).get('error')).toBe('access_denied');
    expect(responseParams(continueLink(denied)).get('iss')).toBe(server.issuer);

    // The browser session stays: the next request goes straight to the consent step, and allowing gives a code.
    page = await agent.follow(url('openid profile'));
    expect(page.html).toContain('action="/ui/login/consent"');
    const allowed = await submit(agent, page, '/ui/login/consent', { decision: 'allow' });
    expect(responseParams(allowed.location!).get('code')).toBeTruthy();
    // Asked once: the same (or fewer) scopes answer at once, also without UI.
    expect(responseParams((await agent.follow(url('openid'))).location!).get('code')).toBeTruthy();
    expect(responseParams((await agent.follow(url('openid profile', { prompt: 'none' }))).location!).get('code')).toBeTruthy();
    // More than was allowed: without UI the answer is consent_required (on Sesame's page, with the link); with UI the person is asked again.
    expect(responseParams(continueLink(await agent.follow(url('openid profile email', { prompt: 'none' })))).get('error')).toBe('consent_required');
    expect((await agent.follow(url('openid profile email'))).html).toContain('action="/ui/login/consent"');
    // prompt=consent asks even for what was allowed.
    expect((await agent.follow(url('openid', { prompt: 'consent' }))).html).toContain('action="/ui/login/consent"');
  });

  it('a self-registered device client is asked about on the same page, which says it registered itself (in German too)', async () => {
    const created = await register(
      {
        client_name: 'Stranger TV',
        redirect_uris: ['http://127.0.0.1:8765/cb'],
        token_endpoint_auth_method: 'none',
        application_type: 'native',
        grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code'],
      },
      { token: server.pat },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const started = await fetch(`${server.url}/oauth/v2/device_authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: created.body!.client_id, scope: 'openid profile' }).toString(),
    });
    expect(started.status).toBe(200);
    const link = new URL(((await started.json()) as { verification_uri_complete: string }).verification_uri_complete);
    // The app's name is `<client_name> (<client_id>)`.
    for (const [language, warning] of [
      ['en', /Stranger TV \([^)]+\) registered itself with this server, which does not vouch for it\./],
      ['de', /Stranger TV \([^)]+\) hat sich selbst bei diesem Server registriert/],
    ] as const) {
      const agent = new Agent(server);
      const headers = { 'accept-language': language };
      let page = await agent.follow(link.pathname + link.search, { headers });
      const userCode = /id="user_code" name="user_code"[^>]* value="([^"]*)"/.exec(page.html ?? '')?.[1] ?? '';
      // The browser's language, as it sends it with every request: the sign-in keeps the one of the code's POST.
      const form = formOf(page.html!, '/ui/login/device');
      page = await agent.follow(form.action, { form: { ...form.fields, user_code: userCode }, headers });
      page = await submit(agent, page, '/ui/login/loginname', { loginName: person.loginName });
      page = await submit(agent, page, '/ui/login/password', { password: person.password });
      expect(page.html).toContain('action="/ui/login/device/consent"');
      expect(page.html).toMatch(warning);
    }
  });
});

describe('no open redirect through a registered client (RFC 9700 §4.11.2)', () => {
  const authorizeUrl = (clientId: string, extra: Record<string, string> = {}) =>
    `/oauth/v2/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 's', ...extra })}`;

  it("its authorization errors are shown on Sesame's page with a link that delivers them; the instance's own apps are redirected to", async () => {
    const created = await register({ ...WEB, client_name: 'Phisher' }, { token: server.pat });
    const clientId = created.body!.client_id as string;
    const own = await createWebApp(server);
    for (const [extra, error] of [
      [{ scope: 'profile' }, 'invalid_scope'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ response_type: 'bogus' }, 'invalid_request'],
      [{ code_challenge_method: 'S256' }, 'invalid_request'],
      [{ prompt: 'none' }, 'login_required'],
    ] as const) {
      const page = await new Agent(server).follow(authorizeUrl(clientId, extra));
      expect({ extra, status: page.status, location: page.location }).toEqual({ extra, status: 400, location: undefined });
      expect(page.html).toMatch(/Phisher \([^)]+\) registered itself with this server/);
      const link = new URL(continueLink(page));
      expect(link.origin + link.pathname).toBe(REDIRECT);
      expect(Object.fromEntries(link.searchParams)).toMatchObject({ error, state: 's', iss: server.issuer });
      // The same request from the instance's own app is redirected at once, as in ZITADEL.
      const redirected = await new Agent(server).follow(authorizeUrl(own.clientId, extra));
      expect(responseParams(redirected.location!).get('error')).toBe(error);
    }
    // form_post: a form the person submits, never one that submits itself.
    const posted = await new Agent(server).follow(authorizeUrl(clientId, { scope: 'profile', response_mode: 'form_post' }));
    expect(posted.status).toBe(400);
    expect(posted.html).not.toContain('<script');
    expect(formOf(posted.html!, REDIRECT).fields).toMatchObject({ error: 'invalid_scope', state: 's', iss: server.issuer });
    // Localized like the login's pages.
    const german = await new Agent(server).follow(authorizeUrl(clientId, { scope: 'profile', ui_locales: 'de' }));
    expect(german.html).toContain('Die Anmeldung wurde nicht abgeschlossen');
    expect(german.html).toMatch(/Weiter zu Phisher \([^)]+\)/);
  });

  it('end_session sends the browser to its post-logout URI only with an ID token issued to it', async () => {
    const bye = 'https://leaver.example.com/bye';
    const created = await register({ ...WEB, client_name: 'Leaver', post_logout_redirect_uris: [bye] }, { token: server.pat });
    const client = { id: created.body!.client_id as string, secret: created.body!.client_secret as string };
    const endSession = (agent: Agent, params: Record<string, string>) => agent.fetch(`/oidc/v1/end_session?${new URLSearchParams(params)}`);

    // client_id alone (anyone can send it): signed out, and a link to the URI for the person to follow.
    const bare = await endSession(new Agent(server), { client_id: client.id, post_logout_redirect_uri: bye, state: 'x' });
    expect(bare.status).toBe(200);
    expect(bare.headers.get('location')).toBeNull();
    const page = { status: bare.status, html: await bare.text(), headers: bare.headers };
    expect(page.html).toContain('Signed out');
    expect(page.html).toMatch(/Leaver \([^)]+\) registered itself with this server/);
    expect(continueLink(page)).toBe(`${bye}?state=x`);

    // With an ID token the client was issued: redirected, with state.
    const config = await oidc.discovery(new URL(server.issuer), client.id, client.secret, oidc.ClientSecretBasic(client.secret), { execute: [oidc.allowInsecureRequests] });
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: 's',
    });
    const agent = new Agent(server);
    const done = await signIn(agent, url.pathname + url.search, person);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.location!), { pkceCodeVerifier: verifier, expectedState: 's' });
    const hinted = await endSession(agent, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: bye, state: 'x' });
    expect(hinted.status).toBe(302);
    expect(hinted.headers.get('location')).toBe(`${bye}?state=x`);
  });
});

describe('registered clients are strangers', () => {
  it("to each other and to the management API: no token for the admin audience, no introspecting another's tokens", async () => {
    const a = await register({ ...WEB, client_name: 'A' }, { token: server.pat });
    const b = await register({ ...WEB, client_name: 'B' }, { token: server.pat });
    const configOf = (c: typeof a) =>
      oidc.discovery(new URL(server.issuer), c.body!.client_id, c.body!.client_secret, oidc.ClientSecretBasic(c.body!.client_secret), { execute: [oidc.allowInsecureRequests] });
    const [configA, configB] = await Promise.all([configOf(a), configOf(b)]);
    const authorizeAs = async (config: oidc.Configuration, scope: string) => {
      const verifier = oidc.randomPKCECodeVerifier();
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state: 's' });
      return { done: await signIn(new Agent(server), url.pathname + url.search, person), verifier };
    };
    // A signed-in admin's session must not hand a stranger's client a token for the management API.
    const admin = await authorizeAs(configA, 'openid urn:zitadel:iam:org:project:id:zitadel:aud');
    const refused = new URL(continueLink(admin.done)).searchParams;
    expect(refused.get('error')).toBe('invalid_scope');

    const { done, verifier } = await authorizeAs(configA, 'openid');
    const tokens = await oidc.authorizationCodeGrant(configA, new URL(done.location!), { pkceCodeVerifier: verifier, expectedState: 's' });
    expect(tokens.claims()!.aud).not.toContain(b.body!.client_id);
    expect((await oidc.tokenIntrospection(configA, tokens.access_token)).active).toBe(true);
    expect((await oidc.tokenIntrospection(configB, tokens.access_token)).active).toBe(false);
    // Nor do PATs tell a registered client anything.
    expect((await oidc.tokenIntrospection(configB, server.pat)).active).toBe(false);

    // RFC 7592 §2.3: deleting the client ends the tokens it was issued (userinfo is asked here).
    const userinfo = () => fetch(`${server.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect((await userinfo()).status).toBe(200);
    expect((await manage(a.body!.registration_client_uri, 'DELETE', a.body!.registration_access_token)).status).toBe(204);
    expect((await userinfo()).status).toBe(401);
  });
});

describe('the management project', () => {
  const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
  const managementApps = async () => (await api(server, 'POST', `/management/v1/projects/${management()}/apps/_search`, { token: server.pat, body: {} })).body.result ?? [];
  const management = () => server.app.ctx.instance.managementProjectId;

  it('is refused as the project of registered clients', async () => {
    const res = await setRegistration(server, { orgId, projectId: management() });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(3);
    expect(res.body.message).toMatch(/^projectId: project \S+ is the instance's management project; registered clients may not be created in it \(DCR-Prj02\)$/);
    expect((await api(server, 'GET', SETTINGS, { token: server.pat })).body.settings.projectId).toBe(projectId);
  });

  it('a stored setting naming it (made before it was refused) is not honoured: registration is refused', async () => {
    await server.app.ctx.settings.setDynamicRegistration({ projectId: management() });
    try {
      const before = await managementApps();
      const refused = await register(WEB, { token: server.pat });
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ error: 'temporarily_unavailable', error_description: expect.stringContaining("is the instance's management project") });
      expect(await managementApps()).toEqual(before);
    } finally {
      await server.app.ctx.settings.setDynamicRegistration({ projectId });
    }
  });

  it('a registered client in it (from before) gets no management-API token: default audience, refresh, :aud scope, token exchange', async () => {
    expect((await api(server, 'PUT', '/v2/features/instance', { token: server.pat, body: { oidcTokenExchange: true } })).status).toBe(200);
    try {
      // Registered where it may be, then its twin put into the management project as an earlier setting would have.
      const made = await register({ ...WEB, grant_types: ['authorization_code', 'refresh_token', TOKEN_EXCHANGE] }, { token: server.pat });
      expect(made.status, JSON.stringify(made.body)).toBe(201);
      // Registered on whichever thread took the request: the main thread's copy holds it once caught up.
      await server.app.caughtUp();
      const { ctx } = server.app;
      const template = ctx.clients.appByClient(made.body!.client_id)!;
      type AppInput = Parameters<typeof ctx.clients.addApp>[1];
      const { app, clientSecret } = await ctx.clients.addApp(ctx.orgs.getProject(management())!, {
        clientId: uniqueName('legacy'),
        name: uniqueName('Legacy registered client'),
        oidc: template.oidc as AppInput['oidc'],
        registration: template.registration as AppInput['registration'],
      });
      const config = await oidc.discovery(new URL(server.issuer), app.clientId, clientSecret, oidc.ClientSecretBasic(clientSecret!), { execute: [oidc.allowInsecureRequests] });
      const signInWith = async (scope: string) => {
        const verifier = oidc.randomPKCECodeVerifier();
        const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope, code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state: 's' });
        return { done: await signIn(new Agent(server), url.pathname + url.search, person), verifier };
      };
      const managementApi = (token: string) => api(server, 'GET', '/management/v1/orgs/me', { token });

      // The app's own project is the management project: its default audience leaves it out.
      const { done, verifier } = await signInWith('openid offline_access');
      const tokens = await oidc.authorizationCodeGrant(config, new URL(done.location!), { pkceCodeVerifier: verifier, expectedState: 's' });
      expect(tokens.claims()!.aud).toEqual([app.clientId]);
      expect((await oidc.tokenIntrospection(config, tokens.access_token)).aud).toEqual([app.clientId]);
      expect((await managementApi(tokens.access_token)).status).toBe(401);
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      expect((await oidc.tokenIntrospection(config, refreshed.access_token)).aud).toEqual([app.clientId]);
      expect((await managementApi(refreshed.access_token)).status).toBe(401);

      // Asked for by name: refused, as for any registered client.
      const scoped = await signInWith('openid urn:zitadel:iam:org:project:id:zitadel:aud');
      // A registered client's error is shown on Sesame's page, with a link that delivers it.
      expect(new URL(continueLink(scoped.done)).searchParams.get('error')).toBe('invalid_scope');
      const exchanged = await oidc
        .genericGrantRequest(config, TOKEN_EXCHANGE, { subject_token: tokens.access_token, subject_token_type: 'urn:ietf:params:oauth:token-type:access_token', audience: management() })
        .catch((e: unknown) => e);
      expect((exchanged as oidc.ResponseBodyError).error).toBe('invalid_target');
    } finally {
      await api(server, 'PUT', '/v2/features/instance', { token: server.pat, body: { oidcTokenExchange: false } });
    }
  });
});

describe('DPoP-bound registered clients', () => {
  it('dpop_bound_access_tokens is registered, returned, and enforced at the token endpoint', async () => {
    const created = await register({ redirect_uris: ['http://127.0.0.1:7000/cb'], token_endpoint_auth_method: 'none', dpop_bound_access_tokens: true }, { token: server.pat });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body!.dpop_bound_access_tokens).toBe(true);
    const res = await fetch(`${server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: 'x', redirect_uri: 'http://127.0.0.1:7000/cb', client_id: created.body!.client_id }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_dpop_proof');
  });
});

describe('RFC 7592 management', () => {
  it('GET reads it back without the secret, PUT replaces the metadata, DELETE removes it', async () => {
    const created = await register({ ...WEB, logo_uri: 'https://example.com/logo.png' }, { token: server.pat });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const { registration_client_uri: uri, registration_access_token: token, client_id: clientId } = created.body!;

    const read = await manage(uri, 'GET', token);
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('client_secret');
    expect(read.body).not.toHaveProperty('registration_access_token');
    expect(read.body).toMatchObject({ client_id: clientId, logo_uri: 'https://example.com/logo.png', redirect_uris: [REDIRECT], client_id_issued_at: created.body!.client_id_issued_at });

    // Replaced as a whole: logo_uri left out is gone, the new redirect URI is in force.
    const updated = await manage(uri, 'PUT', token, { client_id: clientId, client_secret: created.body!.client_secret, redirect_uris: ['https://app.example.com/cb'], client_name: 'Renamed' });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body).toMatchObject({ client_name: 'Renamed', redirect_uris: ['https://app.example.com/cb'] });
    expect(updated.body).not.toHaveProperty('logo_uri');
    const authorize = await new Agent(server).follow(`/oauth/v2/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid' })}`);
    expect(authorize.status).toBe(400);

    expect((await manage(uri, 'PUT', token, { client_id: 'other', redirect_uris: [REDIRECT] })).body!.error).toBe('invalid_client_metadata');
    expect((await manage(uri, 'PUT', token, { client_id: clientId, client_secret: 'wrong', redirect_uris: [REDIRECT] })).body!.error).toBe('invalid_client_metadata');
    expect((await manage(uri, 'PUT', token, { client_id: clientId, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_post' })).body!.error).toBe('invalid_client_metadata');
    expect((await manage(uri, 'PUT', token, { client_id: clientId, redirect_uris: [REDIRECT], registration_access_token: token })).body!.error).toBe('invalid_client_metadata');

    const wrong = await manage(uri, 'GET', token.slice(0, -1) + (token.endsWith('a') ? 'b' : 'a'));
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
    expect((await manage(uri, 'GET', undefined)).status).toBe(401);
    // Another client's token does not open this one.
    const other = await register(WEB, { token: server.pat });
    expect((await manage(uri, 'GET', other.body!.registration_access_token)).status).toBe(401);

    const removed = await manage(uri, 'DELETE', token);
    expect(removed.status).toBe(204);
    expect((await manage(uri, 'GET', token)).status).toBe(401);
    // Its client id no longer authenticates.
    const grant = await fetch(`${server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:${created.body!.client_secret}`).toString('base64')}` },
      body: `grant_type=authorization_code&code=x&redirect_uri=${encodeURIComponent(REDIRECT)}`,
    });
    expect(grant.status).toBe(401);
  });

  it('an RFC 7592 update replaces the metadata and keeps what an administrator set beyond it', async () => {
    const created = await register({ ...WEB, client_name: 'Tuned' }, { token: server.pat });
    const listed = await api(server, 'POST', `/management/v1/projects/${projectId}/apps/_search`, { token: server.pat, body: {} });
    const app = listed.body.result.find((a: any) => a.oidcConfig?.clientId === created.body!.client_id);
    const tuned = await api(server, 'PUT', `/management/v1/projects/${projectId}/apps/${app.id}/oidc_config`, {
      token: server.pat,
      body: { ...app.oidcConfig, accessTokenType: 'OIDC_TOKEN_TYPE_JWT', accessTokenLifetime: '300s' },
    });
    expect(tuned.status, JSON.stringify(tuned.body)).toBe(200);
    const updated = await manage(created.body!.registration_client_uri, 'PUT', created.body!.registration_access_token, {
      client_id: created.body!.client_id,
      redirect_uris: ['https://app.example.com/cb'],
      client_name: 'Tuned',
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    const after = (await api(server, 'GET', `/management/v1/projects/${projectId}/apps/${app.id}`, { token: server.pat })).body.app.oidcConfig;
    expect(after).toMatchObject({ redirectUris: ['https://app.example.com/cb'], accessTokenType: 'OIDC_TOKEN_TYPE_JWT', accessTokenLifetime: '300s' });
  });

  it('the management API lists a registered client as an OIDC app and removes it; its registration token stops working', async () => {
    const created = await register({ ...WEB, client_name: 'Listed' }, { token: server.pat });
    const listed = await api(server, 'POST', `/management/v1/projects/${projectId}/apps/_search`, { token: server.pat, body: {} });
    expect(listed.status).toBe(200);
    const app = listed.body.result.find((a: any) => a.oidcConfig?.clientId === created.body!.client_id);
    // Web and Basic are the enums' zero values, left out as protojson does.
    expect(app).toMatchObject({ name: `Listed (${created.body!.client_id})`, oidcConfig: { redirectUris: [REDIRECT], grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'] } });
    expect(app.oidcConfig.authMethodType).toBeUndefined();
    expect((await api(server, 'GET', `/management/v1/projects/${projectId}/apps/${app.id}`, { token: server.pat })).status).toBe(200);

    expect((await api(server, 'DELETE', `/management/v1/projects/${projectId}/apps/${app.id}`, { token: server.pat })).status).toBe(200);
    expect((await api(server, 'GET', `/management/v1/projects/${projectId}/apps/${app.id}`, { token: server.pat })).status).toBe(404);
    expect((await manage(created.body!.registration_client_uri, 'GET', created.body!.registration_access_token)).status).toBe(401);
  });
});

describe('client metadata', () => {
  it('public native client (none, loopback and custom scheme) and a device client, with oauth4webapi', async () => {
    const as = await oauth.processDiscoveryResponse(new URL(server.issuer), await oauth.discoveryRequest(new URL(server.issuer), { algorithm: 'oidc', ...INSECURE }));
    const response = await oauth.dynamicClientRegistrationRequest(
      as,
      {
        redirect_uris: ['http://127.0.0.1:8765/cb', 'com.example.app:/cb'],
        token_endpoint_auth_method: 'none',
        application_type: 'native',
        grant_types: ['authorization_code', 'urn:ietf:params:oauth:grant-type:device_code'],
        post_logout_redirect_uris: ['com.example.app:/out'],
      },
      { initialAccessToken: server.pat, ...INSECURE },
    );
    const client = await oauth.processDynamicClientRegistrationResponse(response);
    expect(client).not.toHaveProperty('client_secret');
    expect(client).not.toHaveProperty('client_secret_expires_at');
    expect(client).toMatchObject({ application_type: 'native', token_endpoint_auth_method: 'none', post_logout_redirect_uris: ['com.example.app:/out'] });
    const device = await fetch(`${server.url}/oauth/v2/device_authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: client.client_id, scope: 'openid' }).toString(),
    });
    expect(device.status).toBe(200);
  });

  it('private_key_jwt with inline jwks: the kid names the key its assertions are checked with', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const kid = uniqueName('kid');
    const created = await register({ ...WEB, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ ...publicKey.export({ format: 'jwk' }), kid, use: 'sig' }] } }, { token: server.pat });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).not.toHaveProperty('client_secret');
    expect(created.body!.jwks.keys[0]).toMatchObject({ kid, kty: 'RSA', n: publicKey.export({ format: 'jwk' }).n });
    await clock.following(async () => {
      const key = await importPKCS8(privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), 'RS256');
      const config = await oidc.discovery(new URL(server.issuer), created.body!.client_id, {}, oidc.PrivateKeyJwt({ key, kid }), { execute: [oidc.allowInsecureRequests] });
      expect(await oidc.tokenIntrospection(config, 'unknown-token')).toMatchObject({ active: false });
    });
    // The same kid again is taken; jwks cannot change on update.
    const again = await register({ ...WEB, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ ...publicKey.export({ format: 'jwk' }), kid }] } }, { token: server.pat });
    expect(again.body!.error).toBe('invalid_client_metadata');
    const { registration_client_uri: uri, registration_access_token: token, client_id } = created.body!;
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' });
    expect((await manage(uri, 'PUT', token, { client_id, ...WEB, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ ...other, kid }] } })).body!.error).toBe('invalid_client_metadata');
    expect((await manage(uri, 'PUT', token, { client_id, ...WEB, client_name: 'kept keys', token_endpoint_auth_method: 'private_key_jwt', jwks: created.body!.jwks })).status).toBe(200);
  });

  it("a registered key named like a machine user's key never stands in for it (separate tables, no shared cache by id)", async () => {
    // A service account with a key: its id is the kid of every JWT profile assertion it signs.
    const user = await api(server, 'POST', '/management/v1/users/machine', { token: server.pat, body: { userName: uniqueName('svc'), name: 'Service', accessTokenType: 'ACCESS_TOKEN_TYPE_JWT' } });
    const machineKey = await api(server, 'POST', `/management/v1/users/${user.body.userId}/keys`, { token: server.pat, body: { type: 'KEY_TYPE_JSON' } });
    const machineKid = JSON.parse(Buffer.from(machineKey.body.keyDetails, 'base64').toString()).keyId as string;
    // The attacker registers a client whose key has that kid, then uses it (its key is parsed and cached).
    const attacker = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const created = await register(
      { ...WEB, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ ...attacker.publicKey.export({ format: 'jwk' }), kid: machineKid }] } },
      { token: server.pat },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await clock.following(async () => {
      const key = await importPKCS8(attacker.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), 'RS256');
      const config = await oidc.discovery(new URL(server.issuer), created.body!.client_id, {}, oidc.PrivateKeyJwt({ key, kid: machineKid }), { execute: [oidc.allowInsecureRequests] });
      expect(await oidc.tokenIntrospection(config, 'unknown-token')).toMatchObject({ active: false });
      // Then signs a JWT profile assertion as the service account with its own key under that kid: refused.
      const now = Math.floor(clock.now() / 1000);
      const assertion = await new SignJWT({})
        .setProtectedHeader({ alg: 'RS256', kid: machineKid })
        .setIssuer(user.body.userId)
        .setSubject(user.body.userId)
        .setAudience(server.issuer)
        .setIssuedAt(now)
        .setExpirationTime(now + 300)
        .sign(key);
      const res = await fetch(`${server.url}/oauth/v2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion, scope: 'openid' }),
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe('invalid_grant');
    });
  });

  it('every error code: invalid_redirect_uri, invalid_client_metadata, invalid_software_statement', async () => {
    const refused = async (body: unknown, error: string, text?: RegExp) => {
      const res = await register(body, { token: server.pat });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body, JSON.stringify(body)).toMatchObject({ error });
      if (text) expect(res.body!.error_description).toMatch(text);
      expect(res.headers.get('cache-control')).toBe('no-store');
    };
    await refused({}, 'invalid_redirect_uri', /at least one/);
    await refused({ redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri', /javascript/);
    await refused({ redirect_uris: ['data:text/html,hi'], application_type: 'native' }, 'invalid_redirect_uri');
    await refused({ redirect_uris: ['https://app.example.com/cb#frag'] }, 'invalid_redirect_uri', /fragment/);
    await refused({ redirect_uris: ['https://user:pw@app.example.com/cb'] }, 'invalid_redirect_uri');
    await refused({ redirect_uris: ['/relative'] }, 'invalid_redirect_uri');
    await refused({ redirect_uris: ['not a uri at all'], token_endpoint_auth_method: 'none' }, 'invalid_redirect_uri');
    // Only keys client assertions can be checked with: P-384 never could; Ed25519 can.
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({ format: 'jwk' });
    await refused({ ...WEB, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ ...p384, kid: uniqueName('k') }] } }, 'invalid_client_metadata');
    const ed = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
    expect((await register({ ...WEB, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ ...ed, kid: uniqueName('k') }] } }, { token: server.pat })).status).toBe(201);
    // One rule for every app: the management API refuses these too, also for a native app.
    for (const uri of ['javascript:alert(1)', 'https://app.example.com/cb#frag', 'https://user:pw@app.example.com/cb']) {
      const viaApi = await api(server, 'POST', `/management/v1/projects/${projectId}/apps/oidc`, {
        token: server.pat,
        body: { name: uniqueName('bad'), redirectUris: [uri], appType: 'OIDC_APP_TYPE_NATIVE', authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE' },
      });
      expect(viaApi.status, uri).toBe(400);
    }
    // The management API's rules: http only for a confidential code client or a native loopback; custom schemes only native.
    await refused({ redirect_uris: ['http://app.example.com/cb'], token_endpoint_auth_method: 'none' }, 'invalid_redirect_uri', /http/);
    await refused({ redirect_uris: ['com.example.app:/cb'], application_type: 'web' }, 'invalid_redirect_uri', /custom scheme/);
    await refused({ redirect_uris: ['com.example.app:/cb'] }, 'invalid_redirect_uri', /custom scheme/);
    await refused({ redirect_uris: ['http://127.0.0.1:7777/cb', 'http://app.example.com/cb'], token_endpoint_auth_method: 'none' }, 'invalid_redirect_uri', /http/);
    // A loopback redirect beside an https one (as VS Code registers): native too.
    const mixed = await register({ redirect_uris: ['http://127.0.0.1:33418', 'https://vscode.dev/redirect'], token_endpoint_auth_method: 'none' }, { token: server.pat });
    expect(mixed.status, JSON.stringify(mixed.body)).toBe(201);
    expect(mixed.body!.application_type).toBe('native');
    // Only loopback or private-use-scheme redirects and no application_type: a native app (RFC 8252), as MCP clients register.
    const native = await register({ redirect_uris: ['http://localhost:7777/callback'], token_endpoint_auth_method: 'none' }, { token: server.pat });
    expect(native.status, JSON.stringify(native.body)).toBe(201);
    expect(native.body!.application_type).toBe('native');
    await refused({ redirect_uris: [REDIRECT], post_logout_redirect_uris: ['javascript:x'] }, 'invalid_redirect_uri');
    await refused({ ...WEB, jwks_uri: 'https://app.example.com/jwks' }, 'invalid_client_metadata', /jwks_uri is not supported/);
    await refused({ ...WEB, software_statement: 'eyJ...' }, 'invalid_software_statement');
    await refused({ ...WEB, id_token_signed_response_alg: 'none' }, 'invalid_client_metadata');
    await refused({ ...WEB, grant_types: ['client_credentials'] }, 'invalid_client_metadata', /machine users/);
    await refused({ ...WEB, grant_types: ['implicit'] }, 'invalid_client_metadata', /id_token/);
    await refused({ ...WEB, response_types: ['id_token'] }, 'invalid_client_metadata', /implicit/);
    await refused({ ...WEB, response_types: ['code id_token'], grant_types: ['authorization_code', 'implicit'] }, 'invalid_client_metadata');
    await refused({ ...WEB, grant_types: ['refresh_token'] }, 'invalid_client_metadata');
    await refused({ ...WEB, token_endpoint_auth_method: 'tls_client_auth' }, 'invalid_client_metadata');
    await refused({ ...WEB, token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata', /jwks/);
    await refused({ ...WEB, jwks: { keys: [{ kty: 'oct', k: 'x', kid: 'a' }] } }, 'invalid_client_metadata');
    await refused({ ...WEB, token_endpoint_auth_method: 'private_key_jwt', jwks: { keys: [{ kty: 'RSA', kid: 'a', n: 'x', e: 'AQAB', d: 'y' }] } }, 'invalid_client_metadata');
    await refused({ ...WEB, logo_uri: 'javascript:alert(1)' }, 'invalid_client_metadata', /logo_uri/);
    await refused({ ...WEB, client_name: 'x'.repeat(201) }, 'invalid_client_metadata');
    await refused({ ...WEB, client_id_issued_at: 1 }, 'invalid_client_metadata');
    await refused({ ...WEB, backchannel_logout_session_required: false }, 'invalid_client_metadata');
    await refused({ ...WEB, backchannel_logout_uri: 'http://rp.example.com/logout' }, 'invalid_client_metadata', /backChannelLogoutUri/);
    // Sesame POSTs there on its own: a stranger may not aim it into Sesame's network (checked again at each delivery).
    for (const internal of ['https://127.0.0.1/logout', 'https://localhost/logout', 'https://[::1]/logout', 'https://169.254.169.254/latest', 'https://10.0.0.5/x']) {
      await refused({ ...WEB, backchannel_logout_uri: internal }, 'invalid_client_metadata', /not a public host/);
    }
    await refused([WEB], 'invalid_client_metadata');
  });

  it('unknown extension fields are ignored and not echoed; known descriptive ones are returned', async () => {
    const res = await register({ ...WEB, x_custom: 'ignored', 'client_name#ja-Jpan-JP': 'ignored', software_id: 'sw-1', tos_uri: 'https://example.com/tos' }, { token: server.pat });
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty('x_custom');
    expect(res.body).not.toHaveProperty('client_name#ja-Jpan-JP');
    expect(res.body).toMatchObject({ software_id: 'sw-1', tos_uri: 'https://example.com/tos' });
  });

  it('hostile bodies are refused with 4xx, never 5xx', async () => {
    const many = await register({ redirect_uris: Array.from({ length: 5000 }, (_, i) => `https://a.example/${i}`) }, { token: server.pat });
    // Over the 64 KiB bound: refused before the body is parsed.
    expect(many.status).toBe(400);
    expect(many.body).toMatchObject({ error: 'invalid_request', error_description: 'request body too large' });
    const some = await register({ redirect_uris: Array.from({ length: 21 }, (_, i) => `https://a.example/${i}`) }, { token: server.pat });
    expect(some.status).toBe(400);
    expect(some.body!.error).toBe('invalid_redirect_uri');
    expect((await register(undefined, { token: server.pat, raw: '{"redirect_uris": [' })).body!.error).toBe('invalid_client_metadata');
    expect((await register(undefined, { token: server.pat, raw: '['.repeat(30_000) + ']'.repeat(30_000) })).status).toBe(400);
    expect((await register(undefined, { token: server.pat, raw: 'null' })).body!.error).toBe('invalid_client_metadata');
    const proto = await register(undefined, { token: server.pat, raw: JSON.stringify(WEB).replace('{', '{"__proto__":{"enabled":true},"constructor":"x",') });
    expect(proto.status).toBe(201);
    expect(proto.body).not.toHaveProperty('enabled');
    expect((await register({ redirect_uris: [`https://a.example/${'x'.repeat(3000)}`] }, { token: server.pat })).status).toBe(400);
    expect((await register({ ...WEB, contacts: Array.from({ length: 11 }, () => 'a@b.c') }, { token: server.pat })).status).toBe(400);
    // Without a token, a large body is refused before it is read (only the headers are sent).
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(server.port, '127.0.0.1', () =>
        socket.write(`POST /oauth/v2/register HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\nConnection: close\r\n\r\n`),
      );
      let data = '';
      socket.on('data', (d) => (data += d));
      socket.on('error', reject);
      socket.on('close', () => resolve(data));
    });
    // 401 (no token) where the check runs before the upload; an HTTP acceptor thread whose copy of
    // the settings is being reloaded leaves that check to the main thread and refuses the size first.
    expect(answer).toMatch(/^HTTP\/1\.1 (401 |400 )/);
    expect(answer).toMatch(/"error":"invalid_token"|request body too large/);
  });
});

describe('open registration', () => {
  it('needs no token, and is limited per source address (the clock moves, nothing sleeps)', async () => {
    expect((await setRegistration(server, { allowUnauthenticated: true, registrationsPerAddressPerHour: 3 })).status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await register(WEB)).status).toBe(201);
    const limited = await register(WEB);
    expect(limited.status).toBe(429);
    expect(limited.body!.error).toBe('temporarily_unavailable');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // An initial access token is not counted against the address.
    expect((await register(WEB, { token: server.pat })).status).toBe(201);
    clock.advance(60 * 60_000 + 1);
    expect((await register(WEB)).status).toBe(201);
  });

  it("stops at the project's quota of registered clients", async () => {
    const quotaProject = await newProject(server);
    expect((await setRegistration(server, { projectId: quotaProject, maxClients: 2, registrationsPerAddressPerHour: 100 })).status).toBe(200);
    expect((await register(WEB)).status).toBe(201);
    expect((await register(WEB)).status).toBe(201);
    const full = await register(WEB);
    expect(full.status).toBe(403);
    expect(full.body!.error).toBe('access_denied');
    expect((await setRegistration(server, { projectId, maxClients: 1000, allowUnauthenticated: false })).status).toBe(200);
  });

  it('a target project with projectRoleCheck lets only people with a role sign in to registered clients', async () => {
    const checked = await api(server, 'POST', '/management/v1/projects', { token: server.pat, body: { name: uniqueName('checked'), projectRoleCheck: true } });
    await api(server, 'POST', `/management/v1/projects/${checked.body.id}/roles`, { token: server.pat, body: { roleKey: 'user', displayName: 'User' } });
    expect((await setRegistration(server, { projectId: checked.body.id, allowUnauthenticated: true, registrationsPerAddressPerHour: 50 })).status).toBe(200);
    const created = await register({ ...WEB, token_endpoint_auth_method: 'client_secret_post' });
    expect(created.status).toBe(201);
    const authorizeUrl = `/oauth/v2/authorize?${new URLSearchParams({ client_id: created.body!.client_id, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 's' })}`;
    const stranger = await createHuman(server);
    const denied = await signIn(new Agent(server), authorizeUrl, stranger);
    expect(new URL(continueLink(denied)).searchParams.get('error')).toBe('access_denied');
    await api(server, 'POST', `/management/v1/users/${stranger.userId}/grants`, { token: server.pat, body: { projectId: checked.body.id, roleKeys: ['user'] } });
    const allowed = await signIn(new Agent(server), authorizeUrl, stranger);
    expect(new URL(allowed.location!).searchParams.get('code')).toBeTruthy();
    expect((await setRegistration(server, { projectId, allowUnauthenticated: false })).status).toBe(200);
  });

  it('off again: discovery drops the field and registered clients cannot be managed', async () => {
    const created = await register(WEB, { token: server.pat });
    expect((await setRegistration(server, { enabled: false })).status).toBe(200);
    expect(await discoveryDoc()).not.toHaveProperty('registration_endpoint');
    expect((await manage(created.body!.registration_client_uri, 'GET', created.body!.registration_access_token)).status).toBe(404);
    expect((await setRegistration(server, { enabled: true })).status).toBe(200);
    expect((await manage(created.body!.registration_client_uri, 'GET', created.body!.registration_access_token)).status).toBe(200);
  });
});

describe('across a restart, with two HTTP threads', () => {
  it('keeps the setting and the registrations; the registration access token is on disk only hashed', async () => {
    const dataDir = tempDataDir();
    const env = { SESAME_HTTP_THREADS: '2' };
    let first: InProcessServer | undefined = await startInProcess({ dataDir, clock: new TestClock(), env });
    try {
      const project = await newProject(first);
      expect((await setRegistration(first, { enabled: true, orgId: await ownOrg(first), projectId: project, allowUnauthenticated: true })).status).toBe(200);
      // Discovery follows the setting on every thread (several requests: both threads answer some).
      for (let i = 0; i < 6; i++) expect((await discoveryDoc(first)).registration_endpoint).toBe(`${first.issuer}/oauth/v2/register`);
      const created = await register(WEB, { target: first });
      expect(created.status).toBe(201);
      const { registration_access_token: token, client_secret: secret } = created.body!;
      await first.close({ keepData: true });
      first = undefined;

      const files = readdirSync(dataDir).filter((f) => f.endsWith('.mdb'));
      const bytes = Buffer.concat(files.map((f) => readFileSync(join(dataDir, f))));
      expect(bytes.includes(token)).toBe(false);
      expect(bytes.includes(secret)).toBe(false);

      const second = await startInProcess({ dataDir, clock: new TestClock(), env });
      try {
        expect((await discoveryDoc(second)).registration_endpoint).toBe(`${second.issuer}/oauth/v2/register`);
        const read = await manage(`${second.issuer}/oauth/v2/register/${created.body!.client_id}`, 'GET', token);
        expect(read.status).toBe(200);
        expect(read.body!.client_id).toBe(created.body!.client_id);
        expect((await setRegistration(second, { enabled: false })).status).toBe(200);
        for (let i = 0; i < 6; i++) expect(await discoveryDoc(second)).not.toHaveProperty('registration_endpoint');
      } finally {
        await second.close();
      }
    } finally {
      await first?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
