import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from './helpers/api.js';
import { Agent, continueLink, createHuman, createWebApp, exchangeCode, formOf, responseParams, signIn, submit, type Human, type WebApp } from './helpers/oidc.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { base32Encode, totpAt } from '../src/crypto/totp.js';

/**
 * The login UI and its policies without a browser: lockout, the TOTP step, CSRF and request
 * binding, languages, cookies, the policy API, end-session rules and the refresh grace window.
 */
/** The servers' time: TOTP codes are computed for it, as an authenticator app with a synchronised clock would. */
const clock = new TestClock();
let server: InProcessServer;
let web: WebApp;
const REDIRECT = 'http://localhost:9999/callback';

const authorizeUrl = (app: WebApp, params: Record<string, string> = {}) =>
  `/oauth/v2/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 's', ...params })}`;

const errorText = (html: string | undefined) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(html ?? '')?.[1];

async function passwordPage(agent: Agent, loginName: string) {
  const first = await agent.follow(authorizeUrl(web));
  return submit(agent, first, '/ui/login/loginname', { loginName });
}

async function tokensFor(location: string, app = web) {
  const tokens = await exchangeCode(server, app, location, REDIRECT);
  expect(tokens.status).toBe(200);
  return tokens;
}

beforeAll(async () => {
  server = await startInProcess({ clock });
  web = await createWebApp(server);
});

afterAll(async () => {
  await server?.close();
});

describe('lockout policy', () => {
  it('is managed through the management API with ZITADEL semantics', async () => {
    const mgmt = (method: string, body?: unknown) => api(server, method, '/management/v1/policies/lockout', { token: server.pat, body });
    const initial = await mgmt('GET');
    expect(initial.status).toBe(200);
    expect(initial.body.policy).toMatchObject({ isDefault: true });
    expect(initial.body.policy.maxPasswordAttempts).toBeUndefined();
    expect((await mgmt('PUT', { maxPasswordAttempts: '5' })).status).toBe(404);
    expect((await mgmt('POST', { maxPasswordAttempts: '5' })).status).toBe(200);
    expect((await mgmt('POST', { maxPasswordAttempts: '5' })).status).toBe(409);
    expect((await mgmt('PUT', { maxPasswordAttempts: 5 })).status).toBe(400);
    expect((await mgmt('PUT', { max_password_attempts: '3', show_lockout_failure: true })).status).toBe(200);
    const custom = await mgmt('GET');
    expect(custom.body.policy).toMatchObject({ maxPasswordAttempts: '3', showLockoutFailure: true });
    expect(custom.body.policy.isDefault).toBeUndefined();
    expect(custom.body.policy.details.resourceOwner).toBeDefined();
    expect((await mgmt('POST', { maxPasswordAttempts: 'many' })).status).toBe(400);
    expect((await api(server, 'GET', '/management/v1/policies/lockout')).status).toBe(401);
  });

  it('counts failed passwords, locks the user and says so; unknown users get the wrong-password answer', async () => {
    const victim = await createHuman(server);
    const agent = new Agent(server);
    let page = await passwordPage(agent, victim.loginName);
    page = await submit(agent, page, '/ui/login/password', { password: 'wrong-1' });
    const wrongPassword = errorText(page.html);
    expect(wrongPassword).toMatch(/wrong/);
    page = await submit(agent, page, '/ui/login/password', { password: 'wrong-2' });
    expect(errorText(page.html)).toBe(wrongPassword);
    page = await submit(agent, page, '/ui/login/password', { password: 'wrong-3' });
    expect(errorText(page.html)).toMatch(/locked/);
    page = await submit(agent, page, '/ui/login/password', { password: victim.password });
    expect(errorText(page.html)).toMatch(/locked/);
    const user = await api(server, 'GET', `/management/v1/users/${victim.userId}`, { token: server.pat });
    expect(user.body.user.state).toBe('USER_STATE_LOCKED');

    const stranger = new Agent(server);
    let unknown = await passwordPage(stranger, 'nobody-here@sesame.localhost');
    expect(unknown.html).toContain('action="/ui/login/password"');
    unknown = await submit(stranger, unknown, '/ui/login/password', { password: 'whatever' });
    expect(errorText(unknown.html)).toBe(wrongPassword);
  });

  it('resets the count after a successful sign-in', async () => {
    const person = await createHuman(server);
    const agent = new Agent(server);
    let page = await passwordPage(agent, person.loginName);
    page = await submit(agent, page, '/ui/login/password', { password: 'wrong-1' });
    page = await submit(agent, page, '/ui/login/password', { password: 'wrong-2' });
    page = await submit(agent, page, '/ui/login/password', { password: person.password });
    expect(page.location).toMatch(/code=/);
    const again = new Agent(server);
    let second = await passwordPage(again, person.loginName);
    second = await submit(again, second, '/ui/login/password', { password: 'wrong-3' });
    expect(errorText(second.html)).toMatch(/wrong/);
  });
});

describe('TOTP step', () => {
  it('asks imported users with an OTP secret for the code; amr is pwd, otp, mfa; a code works once', async () => {
    const secret = base32Encode(Buffer.from('12345678901234567890'));
    const person = await createHuman(server, { otpSecret: secret });
    const agent = new Agent(server);
    let page = await passwordPage(agent, person.loginName);
    page = await submit(agent, page, '/ui/login/password', { password: person.password });
    expect(page.html).toContain('action="/ui/login/otp"');
    expect(page.html).toContain('name="code"');
    const now = Math.floor(clock.now() / 1000);
    const wrong = String((Number(totpAt(secret, now)) + 1) % 1_000_000).padStart(6, '0');
    page = await submit(agent, page, '/ui/login/otp', { code: wrong });
    expect(errorText(page.html)).toMatch(/code/i);
    const code = totpAt(secret, now);
    page = await submit(agent, page, '/ui/login/otp', { code });
    const { claims } = await tokensFor(page.location!);
    expect(claims.amr).toEqual(['pwd', 'otp', 'mfa']);

    const replay = new Agent(server);
    let second = await passwordPage(replay, person.loginName);
    second = await submit(replay, second, '/ui/login/password', { password: person.password });
    second = await submit(replay, second, '/ui/login/otp', { code });
    expect(second.location).toBeUndefined();
    expect(errorText(second.html)).toBeDefined();
  });

  it('refuses an import with an OTP secret that is not base32', async () => {
    const res = await api(server, 'POST', '/management/v1/users/human/_import', {
      token: server.pat,
      body: { userName: `bad-otp-${Date.now()}`, profile: { firstName: 'A', lastName: 'B' }, email: { email: 'a@b.example' }, password: 'Secret-123', otpCode: 'not base32!' },
    });
    expect(res.status).toBe(400);
  });
});

describe('request binding and CSRF', () => {
  it('refuses a form without the CSRF token, with a token of another browser, and a request of another browser', async () => {
    const person = await createHuman(server);
    const agent = new Agent(server);
    const page = await agent.follow(authorizeUrl(web));
    const form = formOf(page.html!);
    const noCsrf = await agent.fetch('/ui/login/loginname', { form: { authRequestID: form.fields.authRequestID!, loginName: person.loginName } });
    expect(noCsrf.status).toBe(403);
    const other = new Agent(server);
    const otherPage = await other.follow(authorizeUrl(web));
    const crossed = await agent.fetch('/ui/login/loginname', {
      form: { authRequestID: form.fields.authRequestID!, csrf: formOf(otherPage.html!).fields.csrf!, loginName: person.loginName },
    });
    expect(crossed.status).toBe(403);
    const stolen = await other.fetch(`/ui/login/login?authRequestID=${form.fields.authRequestID}`);
    expect(stolen.status).toBe(400);
    const noCookie = await fetch(`${server.url}/ui/login/login?authRequestID=${form.fields.authRequestID}`);
    expect(noCookie.status).toBe(400);
    expect(await noCookie.text()).toContain('<h1>');
    const ok = await submit(agent, page, '/ui/login/loginname', { loginName: person.loginName });
    expect(ok.html).toContain('action="/ui/login/password"');
  });

  it('sets an HttpOnly, SameSite=Lax user-agent cookie and serves pages that may not be framed', async () => {
    const res = await fetch(server.url + authorizeUrl(web), { redirect: 'manual' });
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^sesame\.useragent=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
    const agent = new Agent(server);
    const page = await agent.follow(authorizeUrl(web));
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    expect(page.headers.get('cache-control')).toBe('no-store');
    const css = await fetch(`${server.url}/ui/login/resources/sesame.css`);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect(await css.text()).toContain('main.card');
  });
});

describe('languages', () => {
  it('uses ui_locales first, then Accept-Language, then English', async () => {
    const german = await new Agent(server).follow(authorizeUrl(web, { ui_locales: 'fr de' }));
    expect(german.html).toContain('<html lang="de">');
    expect(german.html).toContain('Loginname');
    const accept = await new Agent(server).follow(authorizeUrl(web), { headers: { 'accept-language': 'fr-CH, de;q=0.8, en;q=0.5' } });
    expect(accept.html).toContain('<html lang="de">');
    const english = await new Agent(server).follow(authorizeUrl(web, { ui_locales: 'ja' }), { headers: { 'accept-language': 'ja' } });
    expect(english.html).toContain('<html lang="en">');
    expect(english.html).toContain('Login name');
  });
});

describe('end session rules', () => {
  let person: Human;
  beforeAll(async () => {
    person = await createHuman(server);
  });

  const endSession = (agent: Agent, params: Record<string, string>) => agent.fetch(`/oidc/v1/end_session?${new URLSearchParams(params)}`);

  it('checks client_id against the hint azp and post_logout_redirect_uri against the client', async () => {
    const agent = new Agent(server);
    const { id_token } = await tokensFor((await signIn(agent, authorizeUrl(web), person)).location!);
    const other = await createWebApp(server, { projectId: web.projectId, postLogoutRedirectUris: ['http://localhost:9999/other-bye'] });
    expect((await endSession(agent, { id_token_hint: id_token, client_id: other.clientId })).status).toBe(400);
    expect((await endSession(agent, { id_token_hint: 'garbage' })).status).toBe(400);
    expect((await endSession(agent, { client_id: web.clientId, post_logout_redirect_uri: 'https://evil.example/' })).status).toBe(400);
    // Without a known client the redirect is ignored: the signed-out page is shown.
    const ignored = await endSession(agent, { post_logout_redirect_uri: 'https://evil.example/' });
    expect(ignored.status).toBe(200);
    expect(ignored.headers.get('location')).toBeNull();
    expect(await ignored.text()).toContain('Signed out');
  });

  it('client_id alone with a registered URI: the signed-out page links to it with state (no redirect); logout_hint ends only that user', async () => {
    const other = await createHuman(server);
    const agent = new Agent(server);
    await signIn(agent, authorizeUrl(web, { prompt: 'login' }), person);
    await signIn(agent, authorizeUrl(web, { prompt: 'login' }), other);
    const res = await endSession(agent, {
      client_id: web.clientId,
      post_logout_redirect_uri: 'http://localhost:9999/signed-out',
      logout_hint: other.loginName,
      state: 'x y',
      ui_locales: 'de',
    });
    // Nothing shows that the client asked (no id_token_hint): RP-Initiated Logout 1.0 §3 allows no redirect.
    expect(res.status).toBe(200);
    expect(res.headers.get('location')).toBeNull();
    const page = { status: res.status, html: await res.text(), headers: res.headers };
    expect(page.html).toContain('Abgemeldet');
    expect(continueLink(page)).toBe('http://localhost:9999/signed-out?state=x+y');
    expect(page.html).not.toContain('selbst bei diesem Server registriert');
    // Only `person` is left: prompt=none answers for them without asking.
    const silent = await agent.follow(authorizeUrl(web, { prompt: 'none' }));
    expect((await tokensFor(silent.location!)).claims.sub).toBe(person.userId);
    const german = await endSession(agent, { ui_locales: 'de' });
    expect(await german.text()).toContain('Abgemeldet');
    const after = await agent.follow(authorizeUrl(web, { prompt: 'none' }));
    expect(responseParams(after.location!).get('error')).toBe('login_required');
  });
});

describe('refresh reuse grace window', () => {
  it('answers a retried refresh of the just-rotated token with the same successor, then treats older reuse as theft', async () => {
    // The longest window (60 s), longer than a test may run: the retry lands inside it however slow the machine.
    const grace = await startInProcess({ clock, env: { SESAME_REFRESH_TOKEN_REUSE_GRACE: '60s' } });
    try {
      const app = await createWebApp(grace);
      const person = await createHuman(grace);
      const agent = new Agent(grace);
      const done = await signIn(
        agent,
        `/oauth/v2/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid offline_access' })}`,
        person,
      );
      const token = async (body: Record<string, string>) => {
        const res = await fetch(`${grace.url}/oauth/v2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64')}` },
          body: new URLSearchParams(body).toString(),
        });
        return { status: res.status, body: (await res.json()) as Record<string, string> };
      };
      const first = await token({ grant_type: 'authorization_code', code: responseParams(done.location!).get('code')!, redirect_uri: REDIRECT });
      const rt0 = first.body.refresh_token!;
      const a = await token({ grant_type: 'refresh_token', refresh_token: rt0 });
      const retry = await token({ grant_type: 'refresh_token', refresh_token: rt0 });
      expect(retry.status).toBe(200);
      expect(retry.body.refresh_token).toBe(a.body.refresh_token);
      const b = await token({ grant_type: 'refresh_token', refresh_token: a.body.refresh_token! });
      expect(b.status).toBe(200);
      const stale = await token({ grant_type: 'refresh_token', refresh_token: rt0 });
      expect(stale.status).toBe(400);
      expect((await token({ grant_type: 'refresh_token', refresh_token: b.body.refresh_token! })).status).toBe(400);
    } finally {
      await grace.close();
    }
  });

  it('refuses a grace window over 60 seconds at start-up', async () => {
    await expect(startInProcess({ clock, env: { SESAME_REFRESH_TOKEN_REUSE_GRACE: '61s' } })).rejects.toThrow(/REUSE_GRACE/);
  });
});

describe('https issuer', () => {
  it('uses the __Host- prefix and Secure', async () => {
    const secure = await startInProcess({ clock, env: { SESAME_ISSUER: 'https://login.example.test' } });
    try {
      const app = await createWebApp(secure);
      const res = await fetch(`${secure.url}/oauth/v2/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid' })}`, {
        redirect: 'manual',
      });
      expect(res.status).toBe(302);
      expect(res.headers.get('set-cookie')).toMatch(/^__Host-sesame\.useragent=[^;]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/);
    } finally {
      await secure.close();
    }
  });
});

describe('restart', () => {
  it('keeps browser sessions, refresh tokens and used codes across a restart', async () => {
    const { tempDataDir } = await import('./helpers/server.js');
    const dataDir = tempDataDir();
    const env = { SESAME_ISSUER: 'http://localhost:18081' };
    let first: InProcessServer | undefined = await startInProcess({ dataDir, env, clock });
    let second: InProcessServer | undefined;
    try {
      const app = await createWebApp(first);
      const person = await createHuman(first);
      const agent = new Agent(first);
      const url = `/oauth/v2/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid offline_access' })}`;
      const done = await signIn(agent, url, person);
      const code = responseParams(done.location!).get('code')!;
      const exchange = (s: InProcessServer, body: Record<string, string>) =>
        fetch(`${s.url}/oauth/v2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${app.clientId}:${app.clientSecret}`).toString('base64')}` },
          body: new URLSearchParams(body).toString(),
        });
      const tokens = (await (await exchange(first, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT })).json()) as { refresh_token: string };
      const other = responseParams((await agent.follow(`${url}&prompt=none`)).location!).get('code')!;
      const kept = (await (await exchange(first, { grant_type: 'authorization_code', code: other, redirect_uri: REDIRECT })).json()) as { refresh_token: string };
      await first.stop();
      first = undefined;

      second = await startInProcess({ dataDir, env, clock });
      expect((await exchange(second, { grant_type: 'refresh_token', refresh_token: kept.refresh_token })).status).toBe(200);
      const replay = await exchange(second, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT });
      expect(await replay.json()).toMatchObject({ error: 'invalid_grant' });
      // The replay revoked the grant: its refresh family is gone too.
      expect((await exchange(second, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token })).status).toBe(400);
      const moved = new Agent(second);
      for (const [k, v] of agent.cookies) moved.cookies.set(k, v);
      const silent = await moved.follow(`${url}&prompt=none`);
      const next = responseParams(silent.location!).get('code');
      expect(next).toBeTruthy();
      const fresh = (await (await exchange(second, { grant_type: 'authorization_code', code: next!, redirect_uri: REDIRECT })).json()) as { refresh_token: string };
      expect((await exchange(second, { grant_type: 'refresh_token', refresh_token: fresh.refresh_token })).status).toBe(200);
    } finally {
      await first?.close({ keepData: true });
      await second?.close();
      const { rmSync } = await import('node:fs');
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('login hardening', () => {
  const otpOf = (secret: string, offset = 0) => totpAt(secret, Math.floor(clock.now() / 1000) + offset);

  it('does not carry a passed password over to another login name', async () => {
    const aliceSecret = base32Encode(Buffer.from('alice-secret-0123456'));
    const victimSecret = base32Encode(Buffer.from('victim-secret-012345'));
    const alice = await createHuman(server, { otpSecret: aliceSecret });
    const victim = await createHuman(server, { otpSecret: victimSecret });
    const agent = new Agent(server);
    const page = await passwordPage(agent, alice.loginName);
    const fields = formOf(page.html!, '/ui/login/password').fields;
    // The password check runs in the worker pool; switch the login name while it may be in flight.
    // Whichever the server handles first, the victim's code must not pass on alice's password.
    const checking = agent.follow('/ui/login/password', { form: { ...fields, password: alice.password } });
    await agent.follow('/ui/login/loginname', { form: { ...fields, loginName: victim.loginName } });
    await checking;
    const after = await agent.follow('/ui/login/otp', { form: { ...fields, code: otpOf(victimSecret) } });
    expect(after.location).toBeUndefined();
  });

  it('ends a login request after five wrong codes and refuses codes after ten failures per user', async () => {
    const secret = base32Encode(Buffer.from('brute-force-secret-1'));
    const person = await createHuman(server, { otpSecret: secret });
    const wrong = String((Number(otpOf(secret)) + 500_000) % 1_000_000).padStart(6, '0');
    const attempt = async (count: number) => {
      const agent = new Agent(server);
      let page = await passwordPage(agent, person.loginName);
      page = await submit(agent, page, '/ui/login/password', { password: person.password });
      for (let i = 0; i < count; i++) page = await submit(agent, page, '/ui/login/otp', { code: wrong });
      return { agent, page };
    };
    const first = await attempt(5);
    // The fifth wrong code ended the request: no OTP form any more.
    expect(first.page.status).toBe(400);
    expect(first.page.html).not.toContain('action="/ui/login/otp"');
    const second = await attempt(5);
    expect(second.page.status).toBe(400);
    // Ten failures for this user: even the right code is refused for now.
    const third = await attempt(0);
    const refused = await submit(third.agent, third.page, '/ui/login/otp', { code: otpOf(secret) });
    expect(refused.location).toBeUndefined();
    expect(errorText(refused.html)).toMatch(/locked|gesperrt/i);
  });

  it('does not let a guessed refresh token id revoke the grant', async () => {
    const person = await createHuman(server);
    const agent = new Agent(server);
    const done = await signIn(agent, authorizeUrl(web, { scope: 'openid offline_access' }), person);
    const tokens = await fetch(`${server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${web.clientId}:${web.clientSecret}`).toString('base64')}` },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: responseParams(done.location!).get('code')!, redirect_uri: REDIRECT }).toString(),
    }).then((r) => r.json() as Promise<{ refresh_token: string }>);
    const familyId = tokens.refresh_token.split('.')[0]!;
    const refresh = (token: string) =>
      fetch(`${server.url}/oauth/v2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${web.clientId}:${web.clientSecret}`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }).toString(),
      });
    const forged = await refresh(`${familyId}.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`);
    expect(forged.status).toBe(400);
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
  });
});

describe('project checks at sign-in', () => {
  it('answers access_denied to a user without a grant when the project checks roles', async () => {
    const project = await api(server, 'POST', '/management/v1/projects', { token: server.pat, body: { name: 'checked', projectRoleCheck: true } });
    await api(server, 'POST', `/management/v1/projects/${project.body.id}/roles`, { token: server.pat, body: { roleKey: 'reader', displayName: 'Reader' } });
    const app = await createWebApp(server, { projectId: project.body.id });
    const person = await createHuman(server);
    const denied = await signIn(new Agent(server), authorizeUrl(app), person);
    expect(responseParams(denied.location!).get('error')).toBe('access_denied');
    const grant = await api(server, 'POST', `/management/v1/users/${person.userId}/grants`, { token: server.pat, body: { projectId: project.body.id, roleKeys: ['reader'] } });
    expect(grant.status).toBe(200);
    const allowed = await signIn(new Agent(server), authorizeUrl(app), person);
    expect(responseParams(allowed.location!).get('code')).toBeTruthy();
  });
});
