import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import * as oauth from 'oauth4webapi';
import { decodeJwt } from 'jose';
import { api } from './helpers/api.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { tempDataDir } from './helpers/server.js';
import { LogoutReceiver } from './helpers/logout-receiver.js';
import { Agent, createHuman, createWebApp, DEVICE_APP as PUBLIC_DEVICE_APP, enterDeviceCode, formOf, submit, type Human, type Step, type WebApp } from './helpers/oidc.js';

const DEVICE_APP = { ...PUBLIC_DEVICE_APP, idTokenRoleAssertion: true };

/**
 * The device authorization grant (RFC 8628; issue 13) with real client libraries: openid-client
 * runs the device's side (start, poll until the person decided), the login pages are walked as a
 * person would, and oauth4webapi's single requests show each polling error. The clock is the
 * test's: intervals and expiry are reached by moving it.
 */
let server: InProcessServer;
const clock = new TestClock();
let person: Human;
let device: WebApp;
const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;

beforeAll(async () => {
  server = await startInProcess({ clock });
  person = await createHuman(server);
  device = await createWebApp(server, { name: 'TV', ...DEVICE_APP });
});
afterAll(async () => {
  await server?.close();
});

/** openid-client configured for a public device client; every token request first moves the clock past the interval. */
async function deviceClient(app: WebApp, on: InProcessServer = server) {
  const config = await oidc.discovery(new URL(on.issuer), app.clientId, {}, oidc.None(), { execute: [oidc.allowInsecureRequests] });
  const polls: string[] = [];
  let firstAnswered!: () => void;
  const first = new Promise<void>((resolve) => (firstAnswered = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  config[oidc.customFetch] = async (url, options) => {
    const isPoll = new URL(url).pathname === '/oauth/v2/token';
    if (isPoll) {
      // The first poll is answered at once; later ones wait until the test lets them through.
      if (polls.length > 0) await released;
      clock.advance(5_000);
    }
    const res = await fetch(url, options as RequestInit);
    if (isPoll) {
      const body = (await res.clone().json()) as { error?: string };
      polls.push(body.error ?? `${res.status}`);
      firstAnswered();
    }
    return res;
  };
  return { config, polls, first, release };
}

/** Submits the device page's code form as a browser would: with the code filled in from the link. */
function submitCode(agent: Agent, page: Step): Promise<Step> {
  const userCode = /id="user_code" name="user_code"[^>]* value="([^"]*)"/.exec(page.html ?? '')?.[1] ?? '';
  return submit(agent, page, '/ui/login/device', { user_code: userCode });
}

/** Walks the device page from verification_uri_complete: the code form, then the login. */
const enterCode = (agent: Agent, verificationUriComplete: string, who: Human = person): Promise<Step> => enterDeviceCode(agent, verificationUriComplete, who);

const poll = async (app: WebApp, deviceCode: string) => {
  const as = { issuer: server.issuer, token_endpoint: `${server.url}/oauth/v2/token`, device_authorization_endpoint: `${server.url}/oauth/v2/device_authorization` };
  const res = await oauth.deviceCodeGrantRequest(as, { client_id: app.clientId }, oauth.None(), deviceCode, { [oauth.allowInsecureRequests]: true });
  try {
    return { ok: true as const, tokens: await oauth.processDeviceCodeResponse(as, { client_id: app.clientId }, res) };
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError) return { ok: false as const, status: error.status, error: error.error, description: error.error_description };
    throw error;
  }
};

const start = async (app: WebApp, scope = 'openid') => {
  const res = await fetch(`${server.url}/oauth/v2/device_authorization`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: app.clientId, scope }).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};

describe('device authorization grant', () => {
  it('openid-client: the device polls while the person enters the code, signs in and allows; then gets the tokens the code grant gives', async () => {
    const { config, polls, first, release } = await deviceClient(device);
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid profile offline_access urn:zitadel:iam:org:projects:roles' });
    expect(started.user_code).toMatch(USER_CODE);
    expect(started.verification_uri).toBe(`${server.issuer}/ui/login/device`);
    expect(started.verification_uri_complete).toBe(`${server.issuer}/ui/login/device?user_code=${started.user_code}`);
    expect(started).toMatchObject({ expires_in: 300, interval: 5 });

    // The interval is the test's to keep (the clock moves 5 s per poll): openid-client need not sleep.
    const tokens = oidc.pollDeviceAuthorizationGrant(config, { ...started, interval: 0 });
    await first;
    expect(polls).toEqual(['authorization_pending']);

    const agent = new Agent(server);
    const consent = await enterCode(agent, started.verification_uri_complete!);
    expect(consent.html).toContain('Allow access?');
    expect(consent.html).toContain('TV');
    expect(consent.html).toContain(person.loginName);
    expect(consent.html).toContain('Stay signed in (offline access)');
    // The instance's own app: no warning that it registered itself (test/dynamic-registration.test.ts has one that did).
    expect(consent.html).not.toContain('registered itself');
    const done = await submit(agent, consent, '/ui/login/device/consent', { decision: 'allow' });
    expect(done.status).toBe(200);
    expect(done.html).toContain('Device connected');

    release();
    const result = await tokens;
    expect(polls).toEqual(['authorization_pending', '200']);
    const claims = result.claims()!;
    expect(claims).toMatchObject({ iss: server.issuer, sub: person.userId, azp: device.clientId, amr: ['pwd'] });
    expect(claims.aud).toContain(device.clientId);
    expect(typeof claims.sid).toBe('string');
    expect(result.refresh_token).toBeDefined();
    expect(result.scope).toBe('openid profile offline_access urn:zitadel:iam:org:projects:roles');

    const info = await oidc.fetchUserInfo(config, result.access_token, person.userId);
    expect(info.preferred_username).toBeDefined();
    const refreshed = await oidc.refreshTokenGrant(config, result.refresh_token!);
    expect(refreshed.refresh_token).not.toBe(result.refresh_token);

    // Single use: the device code is spent, and a replay revokes what it issued (as a replayed code does).
    clock.advance(5_000);
    const again = await poll(device, (started as { device_code: string }).device_code);
    expect(again).toMatchObject({ ok: false, status: 400, error: 'invalid_grant' });
    const revoked = await fetch(`${server.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
    expect(revoked.status).toBe(401);
  });

  it('answers each poll as RFC 8628 says: authorization_pending, slow_down (+5 s), access_denied, expired_token, invalid_grant, invalid_request', async () => {
    const started = await start(device);
    expect(started.status).toBe(200);
    const code = started.body.device_code as string;

    clock.advance(5_000);
    expect(await poll(device, code)).toMatchObject({ ok: false, status: 400, error: 'authorization_pending' });
    // Too early: slow_down, and from now on 10 s.
    clock.advance(4_000);
    expect(await poll(device, code)).toMatchObject({ ok: false, status: 400, error: 'slow_down' });
    clock.advance(9_000);
    expect(await poll(device, code)).toMatchObject({ ok: false, error: 'slow_down' });
    clock.advance(15_000);
    expect(await poll(device, code)).toMatchObject({ ok: false, error: 'authorization_pending' });

    // The person denies.
    const agent = new Agent(server);
    const consent = await enterCode(agent, started.body.verification_uri_complete);
    const denied = await submit(agent, consent, '/ui/login/device/consent', { decision: 'deny' });
    expect(denied.html).toContain('Access denied');
    clock.advance(15_000);
    expect(await poll(device, code)).toMatchObject({ ok: false, status: 400, error: 'access_denied' });

    // Nobody decides in time.
    const late = await start(device);
    clock.advance(301_000);
    expect(await poll(device, late.body.device_code)).toMatchObject({ ok: false, status: 400, error: 'expired_token' });
    // And the page no longer takes its code.
    const lateAgent = new Agent(server);
    const lateUrl = new URL(late.body.verification_uri_complete);
    const refused = await submitCode(lateAgent, await lateAgent.follow(lateUrl.pathname + lateUrl.search));
    expect(refused.status).toBe(400);

    expect(await poll(device, 'not-a-device-code')).toMatchObject({ ok: false, status: 400, error: 'invalid_grant' });
    const missing = await fetch(`${server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: device.clientId }).toString(),
    });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: 'invalid_request' });

    // Another client's device code is not this client's.
    const other = await createWebApp(server, { name: 'Other TV', ...DEVICE_APP });
    const foreign = await start(device);
    expect(await poll(other, foreign.body.device_code)).toMatchObject({ ok: false, error: 'invalid_grant' });
  });

  it('needs the device code grant type on the app: unauthorized_client at both endpoints', async () => {
    const web = await createWebApp(server, { authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE', appType: 'OIDC_APP_TYPE_NATIVE', redirectUris: ['http://127.0.0.1/cb'] });
    const refused = await start(web);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('unauthorized_client');
    expect(await poll(web, 'whatever')).toMatchObject({ ok: false, error: 'unauthorized_client' });
    const unknown = await fetch(`${server.url}/oauth/v2/device_authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: 'nobody' }).toString(),
    });
    expect(unknown.status).toBe(401);
    expect(await unknown.json()).toMatchObject({ error: 'invalid_client' });
    const badScope = await start(device, 'openid urn:zitadel:iam:org:project:id:nope:aud');
    expect(badScope).toMatchObject({ status: 400, body: { error: 'invalid_scope' } });
  });

  it('discovery advertises the endpoint and the grant', async () => {
    const doc = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, any>;
    expect(doc.device_authorization_endpoint).toBe(`${server.issuer}/oauth/v2/device_authorization`);
    expect(doc.grant_types_supported).toContain('urn:ietf:params:oauth:grant-type:device_code');
  });

  it('the device page: bad codes get a 400 page, a forged form 403, and wrong codes are limited per address', async () => {
    const agent = new Agent(server);
    const page = await agent.follow('/ui/login/device');
    expect(page.status).toBe(200);
    const form = formOf(page.html!, '/ui/login/device');
    const wrong = await agent.follow('/ui/login/device', { form: { ...form.fields, user_code: 'BCDF-GHJK' } });
    expect(wrong.status).toBe(400);
    expect(wrong.html).toContain('This code is wrong, expired or already used');
    const garbage = await agent.follow('/ui/login/device', { form: { ...form.fields, user_code: '<script>'.repeat(100) } });
    expect(garbage.status).toBe(400);
    expect(garbage.html).not.toContain('<script>');
    const forged = await agent.follow('/ui/login/device', { form: { csrf: 'forged', user_code: 'BCDF-GHJK' } });
    expect(forged.status).toBe(403);
    // Malformed requests: readable 400 pages, never a 5xx.
    for (const [init, query] of [
      [{ method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"user_code":"x"}' }, ''],
      [{ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from([0x75, 0x3d, 0xff]) }, ''],
      [{ method: 'GET' }, '?user_code=%ZZ'],
      [{ method: 'GET' }, `?user_code=${'B'.repeat(5000)}`],
    ] as const) {
      const res = await fetch(`${server.url}/ui/login/device${query}`, init as RequestInit);
      expect(res.status, `${init.method} ${query}`).toBeLessThan(500);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    }
    const german = await new Agent(server).follow('/ui/login/device', { headers: { 'accept-language': 'de' } });
    expect(german.html).toContain('Gerät verbinden');

    // 10 wrong codes in 15 minutes from this address (two above): then even a right code waits.
    for (let i = 0; i < 8; i++) await agent.follow('/ui/login/device', { form: { ...form.fields, user_code: 'BCDF-GHJK' } });
    const started = await start(device);
    const blocked = await agent.follow('/ui/login/device', { form: { ...form.fields, user_code: started.body.user_code } });
    expect(blocked.status).toBe(429);
    expect(blocked.html).toContain('Too many wrong codes');
    // Until the oldest wrong code leaves the window: all ten were typed at this clock time.
    expect(blocked.headers.get('retry-after')).toBe('900');
    clock.advance(15 * 60_000);
    const fresh = await start(device);
    const allowed = await agent.follow('/ui/login/device', { form: { ...form.fields, user_code: fresh.body.user_code.toLowerCase().replace('-', ' ') } });
    expect(allowed.status).toBe(200);
    expect(allowed.html).toContain('action="/ui/login/loginname"');
  });

  it('a signed-in browser goes straight to consent; project checks refuse the device', async () => {
    const agent = new Agent(server);
    const first = await start(device);
    await submit(agent, await enterCode(agent, first.body.verification_uri_complete), '/ui/login/device/consent', { decision: 'allow' });
    // Same browser, another device: only the consent is asked.
    const second = await start(device);
    const url = new URL(second.body.verification_uri_complete);
    const consent = await submitCode(agent, await agent.follow(url.pathname + url.search));
    expect(consent.html).toContain('Allow access?');

    // A project that requires a grant the person does not have.
    const project = await api(server, 'POST', '/management/v1/projects', { token: server.pat, body: { name: 'strict', projectRoleCheck: true } });
    const strict = await createWebApp(server, { projectId: project.body.id, name: 'Strict TV', ...DEVICE_APP });
    const refused = await start(strict);
    const other = new Agent(server);
    const answer = await submit(other, await enterCode(other, refused.body.verification_uri_complete), '/ui/login/device/consent', { decision: 'allow' });
    expect(answer.status).toBe(403);
    expect(answer.html).toContain('Access denied');
    clock.advance(5_000);
    expect(await poll(strict, refused.body.device_code)).toMatchObject({ ok: false, error: 'access_denied' });
  });
});

describe('wrong user codes behind a reverse proxy', () => {
  it('count per client named by X-Forwarded-For when the connection comes from SESAME_TRUSTED_PROXIES', async () => {
    const proxied = await startInProcess({ env: { SESAME_TRUSTED_PROXIES: '127.0.0.1, ::1' } });
    try {
      // This test is the proxy: it appends the client's address to what the client sent.
      const agent = new Agent(proxied);
      const form = formOf((await agent.follow('/ui/login/device')).html!, '/ui/login/device');
      const typeWrong = (forwardedFor: string) => agent.follow('/ui/login/device', { form: { ...form.fields, user_code: 'BCDF-GHJK' }, headers: { 'x-forwarded-for': forwardedFor } });
      for (let i = 0; i < 10; i++) expect((await typeWrong('198.51.100.1')).status).toBe(400);
      expect((await typeWrong('198.51.100.1')).status).toBe(429);
      // A client naming someone else in front of the proxy's entry is still itself.
      expect((await typeWrong('203.0.113.50, 198.51.100.1')).status).toBe(429);
      // Another client behind the same proxy has its own allowance.
      expect((await typeWrong('198.51.100.2')).status).toBe(400);
    } finally {
      await proxied.close();
    }
  });

  it("without SESAME_TRUSTED_PROXIES, X-Forwarded-For is not read: every client counts as the connection's peer", async () => {
    const direct = await startInProcess();
    try {
      const agent = new Agent(direct);
      const form = formOf((await agent.follow('/ui/login/device')).html!, '/ui/login/device');
      for (let i = 0; i < 10; i++) {
        const res = await agent.follow('/ui/login/device', { form: { ...form.fields, user_code: 'BCDF-GHJK' }, headers: { 'x-forwarded-for': `198.51.100.${i}` } });
        expect(res.status).toBe(400);
      }
      const res = await agent.follow('/ui/login/device', { form: { ...form.fields, user_code: 'BCDF-GHJK' }, headers: { 'x-forwarded-for': '198.51.100.77' } });
      expect(res.status).toBe(429);
    } finally {
      await direct.close();
    }
  });
});

describe('device sign-ins and back-channel logout', () => {
  it('the device is told when the session it got tokens in ends', async () => {
    const receiver = await LogoutReceiver.start();
    try {
      const tv = await createWebApp(server, { name: 'Logout TV', ...DEVICE_APP, devMode: true, backChannelLogoutUri: `${receiver.url}/tv` });
      const viewer = await createHuman(server);
      const started = await start(tv, 'openid');
      const agent = new Agent(server);
      await submit(agent, await enterCode(agent, started.body.verification_uri_complete, viewer), '/ui/login/device/consent', { decision: 'allow' });
      clock.advance(5_000);
      const tokens = await poll(tv, started.body.device_code);
      if (!tokens.ok) throw new Error(`poll: ${tokens.error}`);
      const sid = decodeJwt(tokens.tokens.id_token!).sid;
      expect(sid).toEqual(expect.any(String));

      const deactivated = await api(server, 'POST', `/management/v1/users/${viewer.userId}/_deactivate`, { token: server.pat, body: {} });
      expect(deactivated.status).toBe(200);
      await server.tick();
      const [logout] = receiver.accepted('/tv');
      expect(logout).toBeDefined();
      const claims = decodeJwt(logout!.logoutToken!);
      expect(claims).toMatchObject({ aud: tv.clientId, sub: viewer.userId, sid });
    } finally {
      await receiver.close();
    }
  });
});

describe('device codes across a restart', () => {
  it('survive a restart, are stored hashed, and are used once', async () => {
    const dataDir = tempDataDir();
    const restartClock = new TestClock();
    let first: InProcessServer | undefined = await startInProcess({ dataDir, clock: restartClock });
    try {
      const app = await createWebApp(first, { name: 'Restart TV', ...DEVICE_APP });
      const who = await createHuman(first);
      const res = await fetch(`${first.url}/oauth/v2/device_authorization`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: app.clientId, scope: 'openid' }).toString(),
      });
      const started = (await res.json()) as Record<string, string>;
      await first.close();
      first = undefined;

      // Neither code is on disk as such.
      const files = readdirSync(dataDir).filter((f) => f.endsWith('.mdb'));
      const bytes = Buffer.concat(files.map((f) => readFileSync(join(dataDir, f))));
      expect(bytes.includes(started.device_code!)).toBe(false);
      expect(bytes.includes(started.user_code!.replace('-', ''))).toBe(false);
      expect(bytes.includes(started.user_code!)).toBe(false);

      const second = await startInProcess({ dataDir, clock: restartClock });
      try {
        const agent = new Agent(second);
        const url = new URL(started.verification_uri_complete!);
        let page = await submitCode(agent, await agent.follow(url.pathname + url.search));
        page = await submit(agent, page, '/ui/login/loginname', { loginName: who.loginName });
        page = await submit(agent, page, '/ui/login/password', { password: who.password });
        const done = await submit(agent, page, '/ui/login/device/consent', { decision: 'allow' });
        expect(done.html).toContain('Device connected');
        restartClock.advance(5_000);
        const polled = async () => {
          const r = await fetch(`${second.url}/oauth/v2/token`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:device_code', client_id: app.clientId, device_code: started.device_code! }).toString(),
          });
          return { status: r.status, body: (await r.json()) as Record<string, any> };
        };
        // Two polls at once: one gets the tokens, the other invalid_grant (or slow_down, being early).
        const [a, b] = await Promise.all([polled(), polled()]);
        const statuses = [a.status, b.status].sort();
        expect(statuses).toEqual([200, 400]);
        const ok = a.status === 200 ? a : b;
        expect(decodeJwt(ok.body.id_token).sub).toBe(who.userId);
      } finally {
        await second.close();
      }
    } finally {
      await first?.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
