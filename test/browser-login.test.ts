import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oidc from 'openid-client';
import type { Browser } from 'playwright-core';
import { launchChromium, RUN_BROWSER, screenshot as shot } from './helpers/browser.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base32Encode, totpAt } from '../src/crypto/totp.js';
import { api } from './helpers/api.js';
import { createHuman, createWebApp, DEVICE_APP, type Human, type WebApp } from './helpers/oidc.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';

/**
 * A real browser (Debian's chromium via playwright-core) signs in to a tiny relying party that
 * uses openid-client: code flow with PKCE, a wrong password, the TOTP step, single sign-on, and
 * sign-out. Every login page is saved as a screenshot under test/artifacts/.
 */

let server: InProcessServer;
let browser: Browser;
let rp: RelyingParty;
let app: WebApp;
let person: Human;
let introspector: { clientId: string; clientSecret: string };
const secret = base32Encode(Buffer.from('browser-test-secret!'));
// The browser types TOTP codes of the real time, so the server's clock follows the system clock.
const clock = TestClock.followingSystem();

interface RelyingParty {
  origin: string;
  server: Server;
  /** Access tokens the RP received, most recent last. */
  accessTokens: string[];
  configure(app: WebApp): Promise<void>;
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => resolve(body));
  });

/** The relying party: /login starts a code flow, /callback finishes it (GET or form_post), /logout ends the session. */
async function startRelyingParty(): Promise<RelyingParty> {
  let config: oidc.Configuration | undefined;
  const pending = new Map<string, { verifier: string; nonce: string }>();
  let idToken = '';
  const accessTokens: string[] = [];
  const page = (title: string, body: string) => `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1>${body}</body></html>`;
  const http = createServer(async (req, res) => {
    try {
      const url = new URL(req.url!, `http://${req.headers.host}`);
      if (url.pathname === '/login') {
        const verifier = oidc.randomPKCECodeVerifier();
        const state = oidc.randomState();
        const nonce = oidc.randomNonce();
        pending.set(state, { verifier, nonce });
        const target = oidc.buildAuthorizationUrl(config!, {
          redirect_uri: `${rp.origin}/callback`,
          scope: 'openid profile email offline_access',
          code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
          state,
          nonce,
          ...(url.searchParams.get('mode') ? { response_mode: url.searchParams.get('mode')! } : {}),
        });
        res.writeHead(302, { location: target.href }).end();
      } else if (url.pathname === '/callback') {
        const params = req.method === 'POST' ? new URLSearchParams(await readBody(req)) : url.searchParams;
        const state = params.get('state') ?? '';
        const expected = pending.get(state);
        if (!expected) throw new Error('unknown state');
        const current = new URL(`${rp.origin}/callback?${params}`);
        const tokens = await oidc.authorizationCodeGrant(config!, current, { pkceCodeVerifier: expected.verifier, expectedState: state, expectedNonce: expected.nonce });
        idToken = tokens.id_token!;
        accessTokens.push(tokens.access_token);
        const claims = tokens.claims()!;
        const info = await oidc.fetchUserInfo(config!, tokens.access_token, claims.sub);
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(page('Signed in', `<p id="who">${info.name}</p><p id="amr">${(claims.amr as string[]).join(' ')}</p><a id="logout" href="/logout">Sign out</a>`));
      } else if (url.pathname === '/logout') {
        const target = oidc.buildEndSessionUrl(config!, { id_token_hint: idToken, post_logout_redirect_uri: `${rp.origin}/signed-out`, state: 'bye' });
        res.writeHead(302, { location: target.href }).end();
      } else if (url.pathname === '/signed-out') {
        res.writeHead(200, { 'content-type': 'text/html' }).end(page('Signed out of the RP', `<p id="state">${url.searchParams.get('state')}</p>`));
      } else {
        res.writeHead(404).end();
      }
    } catch (error) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
    }
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const rp: RelyingParty = {
    origin: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    server: http,
    accessTokens,
    async configure(client) {
      config = await oidc.discovery(new URL(server.issuer), client.clientId, client.clientSecret, oidc.ClientSecretBasic(client.clientSecret), {
        execute: [oidc.allowInsecureRequests],
      });
    },
  };
  return rp;
}

const introspect = async (token: string) => {
  const res = await fetch(`${server.url}/oauth/v2/introspect`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${introspector.clientId}:${introspector.clientSecret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ token }).toString(),
  });
  return (await res.json()) as { active: boolean };
};

beforeAll(async () => {
  if (!RUN_BROWSER) return;
  server = await startInProcess({ clock });
  rp = await startRelyingParty();
  app = await createWebApp(server, {
    name: 'Shop',
    redirectUris: [`${rp.origin}/callback`],
    postLogoutRedirectUris: [`${rp.origin}/signed-out`],
  });
  await rp.configure(app);
  person = await createHuman(server, { firstName: 'Browser', otpSecret: secret });
  const created = await api(server, 'POST', `/management/v1/projects/${app.projectId}/apps/api`, {
    token: server.pat,
    body: { name: 'introspector', authMethodType: 'API_AUTH_METHOD_TYPE_BASIC' },
  });
  introspector = { clientId: created.body.clientId, clientSecret: created.body.clientSecret };
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (rp) await new Promise((resolve) => rp!.server.close(resolve));
  await server?.close();
});

/**
 * The current TOTP code. No need to wait for a fresh time step: the server also accepts the
 * previous step, so a code typed as its step ends still works.
 */
async function freshCode(): Promise<string> {
  return totpAt(secret, Date.now() / 1000);
}

describe.runIf(RUN_BROWSER)('browser sign-in', () => {
  it('completes a code flow with PKCE, a wrong password, TOTP, SSO and sign-out', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();

    await page.goto(`${rp.origin}/login`);
    // waitForURL has Playwright's 30 s timeout; expect.poll's 1 s is too tight on a busy machine.
    await page.waitForURL((url) => url.pathname.includes('/ui/login/login'));
    expect(await page.locator('h1').textContent()).toBe('Sign in');
    expect(await page.locator('p.intro').textContent()).toContain('Shop');
    await shot(page, '01-login-name');

    await page.fill('input[name=loginName]', person.loginName);
    await page.click('button[type=submit]');
    await page.waitForSelector('input[name=password]');
    await shot(page, '02-password');

    await page.fill('input[name=password]', 'not-the-password');
    await page.click('form[action="/ui/login/password"] button[type=submit]');
    await page.waitForSelector('p.error');
    expect(await page.locator('p.error').textContent()).toContain('wrong');
    await shot(page, '03-password-wrong');

    await page.fill('input[name=password]', person.password);
    await page.click('form[action="/ui/login/password"] button[type=submit]');
    await page.waitForSelector('input[name=code]');
    await shot(page, '04-totp');

    await page.fill('input[name=code]', await freshCode());
    await page.click('button[type=submit]');
    await page.waitForSelector('#who');
    expect(page.url().startsWith(`${rp.origin}/callback`)).toBe(true);
    expect(await page.locator('#who').textContent()).toBe('Browser Lovelace');
    expect(await page.locator('#amr').textContent()).toBe('pwd otp mfa');
    const firstToken = rp.accessTokens.at(-1)!;
    expect((await introspect(firstToken)).active).toBe(true);

    // Single sign-on: the next login at the RP needs no interaction.
    await page.goto(`${rp.origin}/login`);
    await page.waitForSelector('#who');
    expect(rp.accessTokens).toHaveLength(2);

    await page.click('#logout');
    await page.waitForSelector('#state');
    expect(page.url()).toBe(`${rp.origin}/signed-out?state=bye`);
    expect((await introspect(firstToken)).active).toBe(false);
    expect((await introspect(rp.accessTokens.at(-1)!)).active).toBe(false);

    // Signed out: the next login asks for the login name again.
    await page.goto(`${rp.origin}/login`);
    await page.waitForSelector('input[name=loginName]');
    await context.close();
  });

  it('works with JavaScript disabled, including a form_post response', async () => {
    // Another user: a TOTP code is accepted once per user and time step.
    const noJs = await createHuman(server, { firstName: 'Ohne', otpSecret: secret });
    const context = await browser.newContext({ javaScriptEnabled: false, locale: 'de-DE' });
    const page = await context.newPage();
    await page.goto(`${rp.origin}/login?mode=form_post`);
    await page.waitForSelector('input[name=loginName]');
    expect(await page.locator('html').getAttribute('lang')).toBe('de');
    await shot(page, '05-login-name-de');
    await page.fill('input[name=loginName]', noJs.loginName);
    await page.click('button[type=submit]');
    await page.fill('input[name=password]', noJs.password);
    await page.click('form[action="/ui/login/password"] button[type=submit]');
    await page.fill('input[name=code]', await freshCode());
    await page.click('button[type=submit]');
    // Without JavaScript the form_post page shows its button.
    await page.waitForSelector('noscript button, form button[type=submit]');
    await shot(page, '06-form-post-no-js');
    await page.click('button[type=submit]');
    await page.waitForSelector('#who');
    expect(await page.locator('#amr').textContent()).toBe('pwd otp mfa');
    await context.close();
  });

  it('shows account selection, registration, error and signed-out pages', async () => {
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    const authorize = (params: Record<string, string>) =>
      `${server.issuer}/oauth/v2/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: `${rp.origin}/callback`, response_type: 'code', scope: 'openid', ...params })}`;
    await page.goto(authorize({ prompt: 'create' }));
    await page.waitForSelector('input[name=firstName]');
    await shot(page, '07-register');
    const first = await createHuman(server, { firstName: 'First' });
    const other = await createHuman(server, { firstName: 'Second' });
    for (const user of [first, other]) {
      await page.goto(authorize({ prompt: 'login', state: 'x' }));
      await page.fill('input[name=loginName]', user.loginName);
      await page.click('button[type=submit]');
      await page.fill('input[name=password]', user.password);
      await page.click('form[action="/ui/login/password"] button[type=submit]');
      await page.waitForURL((url) => url.href.startsWith(rp.origin));
    }
    await page.goto(authorize({ prompt: 'select_account' }));
    await page.waitForSelector('ul.accounts');
    expect(await page.locator('ul.accounts li').count()).toBe(2);
    await shot(page, '08-select-account');
    await page.goto(`${server.issuer}/oauth/v2/authorize?client_id=unknown&redirect_uri=https%3A%2F%2Fevil.example%2F&response_type=code&scope=openid`);
    expect(page.url().startsWith(server.issuer)).toBe(true);
    await shot(page, '09-error');
    await page.goto(`${server.issuer}/oidc/v1/end_session`);
    expect(await page.locator('h1').textContent()).toBe('Signed out');
    await shot(page, '10-signed-out');
    await context.close();
  });

  it('enrolls TOTP when the org forces MFA: QR code and key on the page, confirmed with a code', async () => {
    const org = await api(server, 'POST', '/management/v1/orgs', { token: server.pat, body: { name: `mfa-${Date.now()}` } });
    const policy = await api(server, 'POST', '/management/v1/policies/login', { token: server.pat, orgId: org.body.id, body: { allowUsernamePassword: true, forceMfa: true } });
    expect(policy.status).toBe(200);
    const enrolling = await createHuman(server, { firstName: 'Enrol', orgId: org.body.id });
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    await page.goto(`${rp.origin}/login`);
    await page.fill('input[name=loginName]', enrolling.loginName);
    await page.click('button[type=submit]');
    await page.fill('input[name=password]', enrolling.password);
    await page.click('form[action="/ui/login/password"] button[type=submit]');
    await page.waitForSelector('img.qr');
    // The QR code is a real image the browser decodes (an SVG rendered on the server, no script).
    expect(
      await page.locator('img.qr').evaluate((img) => (img as unknown as { complete: boolean; naturalWidth: number }).complete && (img as unknown as { naturalWidth: number }).naturalWidth > 0),
    ).toBe(true);
    expect(await page.locator('script').count()).toBe(0);
    expect(await page.locator('form[action="/ui/login/mfa/skip"]').count()).toBe(0);
    await shot(page, '11-totp-enrollment');
    const key = (await page.locator('code.secret').textContent())!.replace(/\s+/g, '');
    expect(key).toMatch(/^[A-Z2-7]{32}$/);
    await page.fill('input[name=code]', totpAt(key, Date.now() / 1000));
    await page.click('form[action="/ui/login/mfa/verify"] button[type=submit]');
    await page.waitForSelector('#who');
    expect(await page.locator('#amr').textContent()).toBe('pwd otp mfa');
    await context.close();
  });

  it('allows a device (RFC 8628): the code from the link, sign-in with TOTP, consent; the device then gets its tokens', async () => {
    const tv = await createWebApp(server, { name: 'Living room TV', ...DEVICE_APP });
    const config = await oidc.discovery(new URL(server.issuer), tv.clientId, {}, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'openid profile' });
    // A person of their own: a TOTP code is taken once per time step, and the tests above used this one's.
    const viewer = await createHuman(server, { firstName: 'Viewer', otpSecret: secret });

    const context = await browser.newContext({ locale: 'de-DE' });
    const page = await context.newPage();
    await page.goto(started.verification_uri_complete!);
    expect(await page.locator('h1').textContent()).toBe('Gerät verbinden');
    expect(await page.inputValue('input[name=user_code]')).toBe(started.user_code);
    await shot(page, '12-device-code');
    await page.click('button[type=submit]');
    await page.waitForSelector('input[name=loginName]');
    await page.fill('input[name=loginName]', viewer.loginName);
    await page.click('button[type=submit]');
    await page.fill('input[name=password]', viewer.password);
    await page.click('form[action="/ui/login/password"] button[type=submit]');
    await page.waitForSelector('input[name=code]');
    await page.fill('input[name=code]', await freshCode());
    await page.click('button[type=submit]');
    await page.waitForSelector('form[action="/ui/login/device/consent"]');
    expect(await page.locator('h1').textContent()).toBe('Zugriff erlauben?');
    expect(await page.locator('p.intro').first().textContent()).toContain('Living room TV');
    expect(await page.locator('script').count()).toBe(0);
    await shot(page, '13-device-consent');
    await page.click('button[value=allow]');
    await page.waitForSelector('h1');
    expect(await page.locator('h1').textContent()).toBe('Gerät verbunden');
    await shot(page, '14-device-done');
    await context.close();

    // The device polls once its interval is up (moved on rather than waited for).
    clock.advance(5_000);
    const tokens = await oidc.pollDeviceAuthorizationGrant(config, { ...started, interval: 0 });
    expect(tokens.claims()).toMatchObject({ sub: viewer.userId, amr: ['pwd', 'otp', 'mfa'] });
    expect((await oidc.fetchUserInfo(config, tokens.access_token, viewer.userId)).name).toBe('Viewer Lovelace');
  });
});
