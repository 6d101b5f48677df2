import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import * as oauth from 'oauth4webapi';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { api } from './helpers/api.js';
import { Agent, createHuman, createWebApp, formOf, responseParams, signIn, submit, type Human, type WebApp } from './helpers/oidc.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';

/**
 * The authorization endpoint: every row of the seed's error table (and where errors may go),
 * each prompt value, each response mode, max_age, login_hint, id_token_hint and the implicit flow.
 */
let server: InProcessServer;
let web: WebApp;
let pub: WebApp;
let implicit: WebApp;
let alice: Human;
let bob: Human;
const REDIRECT = 'http://localhost:9999/callback';

const authorizeUrl = (app: WebApp, params: Record<string, string> = {}) =>
  `/oauth/v2/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 'st4te', ...params })}`;

const webConfig = () => oidc.discovery(new URL(server.issuer), web.clientId, web.clientSecret, oidc.ClientSecretBasic(web.clientSecret), { execute: [oidc.allowInsecureRequests] });

/** An agent signed in as `user` through `app`. */
async function signedIn(user: Human, agent = new Agent(server)): Promise<Agent> {
  const done = await signIn(agent, authorizeUrl(web, { prompt: 'login' }), user);
  expect(done.location, done.html).toMatch(/^http:\/\/localhost:9999\/callback\?code=/);
  return agent;
}

async function exchange(location: string) {
  const code = responseParams(location).get('code')!;
  const res = await fetch(`${server.url}/oauth/v2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${web.clientId}:${web.clientSecret}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT }).toString(),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { id_token: string; access_token: string };
  const claims = JSON.parse(Buffer.from(body.id_token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
  return { ...body, claims };
}

beforeAll(async () => {
  server = await startInProcess();
  web = await createWebApp(server);
  pub = await createWebApp(server, { projectId: web.projectId, authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE', appType: 'OIDC_APP_TYPE_NATIVE' });
  implicit = await createWebApp(server, {
    projectId: web.projectId,
    appType: 'OIDC_APP_TYPE_USER_AGENT',
    authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
    responseTypes: ['OIDC_RESPONSE_TYPE_ID_TOKEN', 'OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN'],
    grantTypes: ['OIDC_GRANT_TYPE_IMPLICIT'],
    devMode: true,
  });
  [alice, bob] = await Promise.all([createHuman(server, { firstName: 'Alice' }), createHuman(server, { firstName: 'Bob' })]);
});

afterAll(async () => {
  await server?.close();
});

describe('errors shown on Sesame (never redirected)', () => {
  const cases: [string, string][] = [
    ['no client_id', `/oauth/v2/authorize?redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&scope=openid`],
    ['unknown client', `/oauth/v2/authorize?client_id=nope&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&scope=openid`],
    ['no redirect_uri', '/oauth/v2/authorize?client_id=CLIENT&response_type=code&scope=openid'],
    ['unregistered redirect_uri', `/oauth/v2/authorize?client_id=CLIENT&redirect_uri=${encodeURIComponent('https://evil.example/cb')}&response_type=code&scope=openid`],
    ['repeated client_id', `/oauth/v2/authorize?client_id=CLIENT&client_id=CLIENT&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&scope=openid`],
    ['malformed percent-encoding', '/oauth/v2/authorize?client_id=%zz'],
  ];
  for (const [name, path] of cases) {
    it(name, async () => {
      const res = await fetch(server.url + path.replaceAll('CLIENT', web.clientId), { redirect: 'manual' });
      expect(res.status).toBe(400);
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(await res.text()).toContain('<h1>');
    });
  }
});

describe('errors redirected to the client (seed error table)', () => {
  const redirected = async (app: WebApp, params: Record<string, string>, raw?: string) => {
    const res = await fetch(server.url + (raw ?? authorizeUrl(app, params)), { redirect: 'manual' });
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    expect(location.startsWith('http://localhost:9999/callback')).toBe(true);
    return responseParams(location);
  };
  const rows: [string, AppKey, Record<string, string>, string][] = [
    ['response_type missing', 'web', { response_type: '' }, 'invalid_request'],
    ['scope missing', 'web', { scope: '' }, 'invalid_request'],
    ['openid missing', 'web', { scope: 'profile email' }, 'invalid_scope'],
    ['malformed scope', 'web', { scope: 'openid "bad"' }, 'invalid_scope'],
    ['response_type not registered', 'web', { response_type: 'id_token', nonce: 'n' }, 'unauthorized_client'],
    ['response_type unsupported', 'web', { response_type: 'token' }, 'unsupported_response_type'],
    ['response_type invalid', 'web', { response_type: 'banana' }, 'invalid_request'],
    ['prompt none with login', 'web', { prompt: 'none login' }, 'invalid_request'],
    ['unknown prompt', 'web', { prompt: 'maybe' }, 'invalid_request'],
    ['max_age not a number', 'web', { max_age: '-1' }, 'invalid_request'],
    ['plain PKCE method', 'web', { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }, 'invalid_request'],
    ['PKCE missing for a public client', 'pub', {}, 'invalid_request'],
    ['nonce missing for implicit', 'implicit', { response_type: 'id_token' }, 'invalid_request'],
    ['request object', 'web', { request: 'eyJhbGciOiJub25lIn0.e30.' }, 'request_not_supported'],
    ['login required (prompt=none, no session)', 'web', { prompt: 'none' }, 'login_required'],
  ];
  type AppKey = 'web' | 'pub' | 'implicit';
  for (const [name, appKey, params, error] of rows) {
    it(`${name} → ${error}`, async () => {
      const app = { web, pub, implicit }[appKey];
      const redirectUri: Record<string, string> = appKey === 'implicit' ? { redirect_uri: REDIRECT } : {};
      const result = await redirected(app, { ...redirectUri, ...params });
      expect(result.get('error')).toBe(error);
      expect(result.get('error_description')).toBeTruthy();
      expect(result.get('state')).toBe('st4te');
      expect(result.get('iss')).toBe(server.issuer);
    });
  }

  it('repeated parameter → invalid_request', async () => {
    const result = await redirected(web, {}, `${authorizeUrl(web)}&scope=openid`);
    expect(result.get('error')).toBe('invalid_request');
    expect(result.get('state')).toBe('st4te');
  });

  it('interaction required: prompt=none with two sessions and no hint', async () => {
    const agent = await signedIn(bob, await signedIn(alice));
    const done = await agent.follow(authorizeUrl(web, { prompt: 'none' }));
    expect(responseParams(done.location!).get('error')).toBe('interaction_required');
  });

  it('errors use the response mode: fragment for implicit, form_post on request', async () => {
    const fragment = await fetch(server.url + authorizeUrl(implicit, { response_type: 'id_token', scope: 'profile' }), { redirect: 'manual' });
    expect(new URL(fragment.headers.get('location')!).hash).toContain('error=invalid_scope');
    const post = await fetch(server.url + authorizeUrl(web, { scope: 'profile', response_mode: 'form_post' }), { redirect: 'manual' });
    expect(post.status).toBe(200);
    const form = formOf(await post.text());
    expect(form.action).toBe(REDIRECT);
    expect(form.fields).toMatchObject({ error: 'invalid_scope', state: 'st4te', iss: server.issuer });
  });
});

describe('RFC 9207: iss in every authorization response', () => {
  const oauthAs = async () => {
    const doc = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(doc.authorization_response_iss_parameter_supported).toBe(true);
    return doc as unknown as oauth.AuthorizationServer;
  };
  it("oauth4webapi's validateAuthResponse takes Sesame's answers and refuses one without iss or from another issuer", async () => {
    const as = await oauthAs();
    const client = { client_id: web.clientId };
    const agent = await signedIn(alice);
    const done = await agent.follow(authorizeUrl(web));
    const params = oauth.validateAuthResponse(as, client, new URL(done.location!), 'st4te');
    expect(params.get('code')).toBeTruthy();
    const error = await fetch(server.url + authorizeUrl(web, { prompt: 'none', scope: 'profile' }), { redirect: 'manual' });
    expect(() => oauth.validateAuthResponse(as, client, new URL(error.headers.get('location')!), 'st4te')).toThrow(oauth.AuthorizationResponseError);
    const stripped = new URL(done.location!);
    stripped.searchParams.delete('iss');
    expect(() => oauth.validateAuthResponse(as, client, stripped, 'st4te')).toThrow(/iss/);
    const mixedUp = new URL(done.location!);
    mixedUp.searchParams.set('iss', 'https://attacker.example');
    expect(() => oauth.validateAuthResponse(as, client, mixedUp, 'st4te')).toThrow(/iss/);
  });
});

describe('prompt', () => {
  it('none: answers silently from the only session', async () => {
    const agent = await signedIn(alice);
    const done = await agent.follow(authorizeUrl(web, { prompt: 'none' }));
    const { claims } = await exchange(done.location!);
    expect(claims.sub).toBe(alice.userId);
  });

  it('omitted: one session answers at once (SSO); two sessions ask to choose', async () => {
    const agent = await signedIn(alice);
    const sso = await agent.follow(authorizeUrl(web));
    expect(sso.location).toMatch(/code=/);
    await signedIn(bob, agent);
    const choose = await agent.follow(authorizeUrl(web));
    expect(choose.html).toContain('action="/ui/login/select"');
    expect(choose.html).toContain(alice.loginName);
    expect(choose.html).toContain(bob.loginName);
  });

  it('login: asks for the password again even with a session', async () => {
    const agent = await signedIn(alice);
    await exchange((await agent.follow(authorizeUrl(web))).location!);
    const page = await agent.follow(authorizeUrl(web, { prompt: 'login' }));
    expect(page.html).toContain('action="/ui/login/loginname"');
    const done = await signIn(agent, authorizeUrl(web, { prompt: 'login' }), alice);
    expect((await exchange(done.location!)).claims.sub).toBe(alice.userId);
    // That auth_time moves with the new sign-in is shown in expiry.test.ts, on a clock the test moves.
  });

  it('select_account: lists the sessions; choosing one answers with that user', async () => {
    const agent = await signedIn(bob, await signedIn(alice));
    const page = await agent.follow(authorizeUrl(web, { prompt: 'select_account' }));
    const sid = [...page.html!.matchAll(/name="sid" value="([^"]+)"/g)].map((m) => m[1]!);
    expect(sid.length).toBe(3); // two accounts and "use another account"
    let chosen: Record<string, unknown> | undefined;
    for (const value of sid.slice(0, 2)) {
      const again = await agent.follow(authorizeUrl(web, { prompt: 'select_account' }));
      const done = await submit(agent, again, '/ui/login/select', { sid: value });
      const { claims } = await exchange(done.location!);
      if (claims.sub === bob.userId) chosen = claims;
    }
    expect(chosen?.sub).toBe(bob.userId);
    const other = await submit(agent, await agent.follow(authorizeUrl(web, { prompt: 'select_account' })), '/ui/login/select', { sid: 'other' });
    expect(other.html).toContain('action="/ui/login/loginname"');
  });

  it('create: shows registration, creates the user and signs them in; refused when the org does not allow it', async () => {
    const agent = new Agent(server);
    const page = await agent.follow(authorizeUrl(web, { prompt: 'create' }));
    expect(page.html).toContain('action="/ui/login/register"');
    const userName = `new-${Date.now()}`;
    const mismatch = await submit(agent, page, '/ui/login/register', {
      firstName: 'Grace',
      lastName: 'Hopper',
      email: 'grace@example.com',
      userName,
      password: 'Cobol-1959!',
      passwordConfirm: 'different',
    });
    expect(mismatch.html).toContain('class="error"');
    const done = await submit(agent, mismatch, '/ui/login/register', {
      firstName: 'Grace',
      lastName: 'Hopper',
      email: 'grace@example.com',
      userName,
      password: 'Cobol-1959!',
      passwordConfirm: 'Cobol-1959!',
    });
    const { claims } = await exchange(done.location!);
    expect(claims.amr).toEqual(['pwd']);
    const user = await api(server, 'GET', `/management/v1/users/${claims.sub}`, { token: server.pat });
    expect(user.body.user.userName).toBe(userName);

    const policy = await api(server, 'POST', '/management/v1/policies/login', { token: server.pat, body: { allowUsernamePassword: true, allowRegister: false } });
    expect(policy.status).toBe(200);
    try {
      const refused = await new Agent(server).follow(authorizeUrl(web, { prompt: 'create' }));
      expect(refused.html).not.toContain('action="/ui/login/register"');
      expect(refused.html).toContain('action="/ui/login/loginname"');
    } finally {
      expect((await api(server, 'DELETE', '/management/v1/policies/login', { token: server.pat })).status).toBe(200);
    }
  });
});

describe('max_age, login_hint, id_token_hint', () => {
  it('max_age: a recent session answers with auth_time', async () => {
    const agent = await signedIn(alice);
    const recent = await agent.follow(authorizeUrl(web, { max_age: '600' }));
    expect((await exchange(recent.location!)).claims.auth_time).toBeTypeOf('number');
    // An older session signing in again is shown in expiry.test.ts, on a clock the test moves.
  });

  it('login_hint (URL-encoded, with +) goes straight to the password of that user', async () => {
    const plus = await createHuman(server, { userName: `first+last-${Date.now()}` });
    const page = await new Agent(server).follow(authorizeUrl(web, { login_hint: plus.loginName }));
    expect(page.html).toContain('action="/ui/login/password"');
    expect(page.html).toContain(plus.loginName);
    const unknown = await new Agent(server).follow(authorizeUrl(web, { login_hint: 'nobody@nowhere.example' }));
    expect(unknown.html).toContain('value="nobody@nowhere.example"');
  });

  it('id_token_hint selects the hinted session for prompt=none; an invalid hint is ignored', async () => {
    const agent = await signedIn(alice);
    const aliceToken = await exchange((await agent.follow(authorizeUrl(web))).location!);
    await signedIn(bob, agent);
    const hinted = await agent.follow(authorizeUrl(web, { prompt: 'none', id_token_hint: aliceToken.id_token }));
    expect((await exchange(hinted.location!)).claims.sub).toBe(alice.userId);
    const invalid = await agent.follow(authorizeUrl(web, { prompt: 'none', id_token_hint: 'not.a.token' }));
    expect(responseParams(invalid.location!).get('error')).toBe('interaction_required');
  });
});

describe('response modes', () => {
  it('code: query by default, fragment and form_post on request, an invalid mode ignored', async () => {
    const agent = await signedIn(alice);
    const query = await agent.follow(authorizeUrl(web));
    expect(new URL(query.location!).searchParams.get('code')).toBeTruthy();
    const fragment = await agent.follow(authorizeUrl(web, { response_mode: 'fragment' }));
    expect(new URL(fragment.location!).hash).toMatch(/^#code=.+&state=st4te&iss=/);
    expect(responseParams(fragment.location!).get('iss')).toBe(server.issuer);
    const invalid = await agent.follow(authorizeUrl(web, { response_mode: 'sideways' }));
    expect(new URL(invalid.location!).searchParams.get('code')).toBeTruthy();
    const post = await agent.follow(authorizeUrl(web, { response_mode: 'form_post' }));
    expect(post.status).toBe(200);
    expect(post.headers.get('content-security-policy')).toMatch(/script-src 'sha256-/);
    const form = formOf(post.html!);
    expect(form.action).toBe(REDIRECT);
    expect(form.fields.state).toBe('st4te');
    await exchange(`${REDIRECT}?code=${form.fields.code}`);
  });
});

describe('implicit flow', () => {
  const jwks = () => createRemoteJWKSet(new URL(`${server.url}/oauth/v2/keys`));

  it('id_token: in the fragment by default, with nonce and the user claims, no access token', async () => {
    const agent = await signedIn(alice);
    const done = await agent.follow(authorizeUrl(implicit, { response_type: 'id_token', nonce: 'n-1', scope: 'openid profile email', response_mode: 'query' }));
    const url = new URL(done.location!);
    expect(url.search).toBe('');
    const params = new URLSearchParams(url.hash.slice(1));
    expect(params.get('access_token')).toBeNull();
    expect(params.get('state')).toBe('st4te');
    const { payload } = await jwtVerify(params.get('id_token')!, jwks(), { issuer: server.issuer, audience: implicit.clientId });
    expect(payload).toMatchObject({ sub: alice.userId, nonce: 'n-1', azp: implicit.clientId, given_name: 'Alice' });
    expect(payload.email).toBeDefined();
    expect(payload.at_hash).toBeUndefined();
  });

  it('id_token token: access token with at_hash, token_type, expires_in', async () => {
    const agent = await signedIn(alice);
    const done = await agent.follow(authorizeUrl(implicit, { response_type: 'id_token token', nonce: 'n-2', scope: 'openid email' }));
    const params = responseParams(done.location!);
    expect(params.get('token_type')).toBe('Bearer');
    expect(Number(params.get('expires_in'))).toBeGreaterThan(0);
    const accessToken = params.get('access_token')!;
    const { payload } = await jwtVerify(params.get('id_token')!, jwks(), { issuer: server.issuer, audience: implicit.clientId });
    const digest = createHash('sha256').update(accessToken).digest();
    expect(payload.at_hash).toBe(digest.subarray(0, 16).toString('base64url'));
    expect(payload.nonce).toBe('n-2');
    expect(payload.email).toBeUndefined();
    const userinfo = await fetch(`${server.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
    expect(await userinfo.json()).toMatchObject({ sub: alice.userId, email: expect.any(String) });
  });

  it('works with openid-client implicitAuthentication', async () => {
    const config = await oidc.discovery(new URL(server.issuer), implicit.clientId, {}, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    oidc.useIdTokenResponseType(config);
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', nonce, state: 'st4te' });
    const agent = await signedIn(alice);
    const done = await agent.follow(url.pathname + url.search);
    const claims = await oidc.implicitAuthentication(config, new URL(done.location!), nonce, { expectedState: 'st4te' });
    expect(claims.sub).toBe(alice.userId);
  });
});

describe('discovery', () => {
  it('advertises the browser endpoints and what they support', async () => {
    const meta = (await webConfig()).serverMetadata();
    expect(meta.authorization_endpoint).toBe(`${server.issuer}/oauth/v2/authorize`);
    expect(meta.userinfo_endpoint).toBe(`${server.issuer}/oidc/v1/userinfo`);
    expect(meta.end_session_endpoint).toBe(`${server.issuer}/oidc/v1/end_session`);
    expect(meta.response_types_supported).toEqual(['code', 'id_token', 'id_token token']);
    expect(meta.response_modes_supported).toEqual(['query', 'fragment', 'form_post']);
    expect(meta.code_challenge_methods_supported).toEqual(['S256']);
    expect(meta.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'implicit', 'refresh_token']));
  });
});

describe('sign-ins under way per client address (SESAME_AUTH_REQUESTS_PER_ADDRESS)', () => {
  it("keeps at most that many per address: a new one takes the place of the address's oldest, finished ones free theirs, other addresses are not touched", async () => {
    const bounded = await startInProcess({ env: { SESAME_AUTH_REQUESTS_PER_ADDRESS: '3', SESAME_TRUSTED_PROXIES: '127.0.0.1, ::1' } });
    try {
      const app = await createWebApp(bounded);
      const person = await createHuman(bounded);
      const url = (state: string) =>
        `/oauth/v2/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: 'http://localhost:9999/callback', response_type: 'code', scope: 'openid', state })}`;
      /** A browser behind the proxy (this test) at `client`, sent to the login. */
      const start = async (state: string, client = '198.51.100.1') => {
        const agent = new Agent(bounded);
        const headers = { 'x-forwarded-for': client };
        const page = await agent.follow(url(state), { headers });
        expect(page.html, state).toContain('action="/ui/login/loginname"');
        return { agent, page, headers };
      };
      /** Signs the person in on a started sign-in: the redirect's parameters, or the page it ended on. */
      const finish = async ({ agent, page, headers }: Awaited<ReturnType<typeof start>>) => {
        let step = await agent.follow('/ui/login/loginname', { form: { ...formOf(page.html!, '/ui/login/loginname').fields, loginName: person.loginName }, headers });
        if (step.html?.includes('action="/ui/login/password"')) {
          step = await agent.follow('/ui/login/password', { form: { ...formOf(step.html, '/ui/login/password').fields, password: person.password }, headers });
        }
        return step;
      };

      const a = await start('a');
      const b = await start('b');
      // A finished sign-in ends its request and frees its place.
      const c = await finish(await start('c'));
      expect(responseParams(c.location!).get('code')).toBeTruthy();
      const d = await start('d');
      // Three under way (a, b, d): the fourth takes the place of the oldest, a.
      const e = await start('e');
      const lost = await finish(a);
      expect(lost.location).toBeUndefined();
      expect(lost.status).toBeGreaterThanOrEqual(400);
      for (const kept of [b, d, e]) expect(responseParams((await finish(kept)).location!).get('code')).toBeTruthy();
      // Another address behind the same proxy has its own places: its sign-ins do not push these out.
      const f = await start('f', '198.51.100.2');
      const g = await start('g');
      for (let i = 0; i < 4; i++) await start(`x${i}`, '198.51.100.2');
      expect(responseParams((await finish(g)).location!).get('code')).toBeTruthy();
      expect((await finish(f)).location).toBeUndefined();
    } finally {
      await bounded.close();
    }
  });
});
