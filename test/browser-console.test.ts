import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import * as oidc from 'openid-client';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from './helpers/api.js';
import { launchChromium, RUN_BROWSER, screenshot } from './helpers/browser.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { totpAt } from '../src/crypto/totp.js';
import { startSmtpReceiver } from './helpers/smtp-receiver.js';

/**
 * The admin console in a real browser (Debian's chromium): the first administrator signs in with
 * the password the first start wrote (and must change it), creates an organization, a project, an
 * OIDC app and a person; the person signs in at a relying party (openid-client) with that app; the
 * administrator sees the sign-in in the activity log. Then: an org owner sees their org only, a
 * form without its CSRF token is refused, and signing out ends the console session and the login's.
 * Every page is saved under test/artifacts/console-*.png.
 */
let server: InProcessServer;
let browser: Browser;
const clock = TestClock.followingSystem();

interface RelyingParty {
  origin: string;
  server: Server;
  configure(clientId: string, clientSecret: string): Promise<void>;
}

/** A relying party with openid-client: /login starts a code flow with PKCE, /callback shows who signed in. */
async function startRelyingParty(issuer: string): Promise<RelyingParty> {
  let config: oidc.Configuration | undefined;
  const pending = new Map<string, { verifier: string; nonce: string }>();
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
          scope: 'openid profile email',
          code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
          state,
          nonce,
        });
        res.writeHead(302, { location: target.href }).end();
      } else if (url.pathname === '/callback') {
        const state = url.searchParams.get('state') ?? '';
        const expected = pending.get(state);
        if (!expected) throw new Error('unknown state');
        const tokens = await oidc.authorizationCodeGrant(config!, new URL(`${rp.origin}/callback?${url.searchParams}`), {
          pkceCodeVerifier: expected.verifier,
          expectedState: state,
          expectedNonce: expected.nonce,
        });
        const info = await oidc.fetchUserInfo(config!, tokens.access_token, tokens.claims()!.sub);
        res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>Shop</title><h1>Shop</h1><p id="who">${info.name}</p>`);
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
    async configure(clientId, clientSecret) {
      config = await oidc.discovery(new URL(issuer), clientId, clientSecret, oidc.ClientSecretBasic(clientSecret), { execute: [oidc.allowInsecureRequests] });
    },
  };
  return rp;
}

let rp: RelyingParty;

beforeAll(async () => {
  if (!RUN_BROWSER) return;
  server = await startInProcess({ clock });
  rp = await startRelyingParty(server.issuer);
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (rp) await new Promise((resolve) => rp.server.close(resolve));
  await server?.close();
});

/** Signs in at Sesame's login (the page the browser is on): name, password, and a new password where one is required. */
async function signIn(page: Page, loginName: string, password: string, newPassword?: string): Promise<void> {
  await page.fill('input[name=loginName]', loginName);
  await page.click('form[action="/ui/login/loginname"] button[type=submit]');
  await page.fill('input[name=password]', password);
  await page.click('form[action="/ui/login/password"] button[type=submit]');
  if (newPassword) {
    await page.waitForSelector('form[action="/ui/login/password/change"]');
    await page.fill('input[name=password]', newPassword);
    await page.fill('input[name=passwordConfirm]', newPassword);
    await page.click('form[action="/ui/login/password/change"] button[type=submit]');
  }
  // A second factor is offered to set up; skipped here (the login policy allows it).
  await page.waitForLoadState('load');
  if (await page.locator('form[action="/ui/login/mfa/skip"]').count()) await page.click('form[action="/ui/login/mfa/skip"] button[type=submit]');
}

/** The text of what `locator` finds (the first), once it is there. */
async function textOf(locator: Locator): Promise<string> {
  await locator.first().waitFor();
  return locator.first().innerText();
}

/** Waits until what `locator` finds shows `text` (pages load after clicks: polled, with Playwright's patience). */
function shows(locator: Locator, text: string): Promise<void> {
  return expect
    .poll(
      () =>
        locator
          .first()
          .innerText()
          .catch(() => ''),
      { timeout: 15_000 },
    )
    .toContain(text);
}

function showsExactly(locator: Locator, text: string): Promise<void> {
  return expect
    .poll(
      () =>
        locator
          .first()
          .innerText()
          .then((t) => t.trim())
          .catch(() => ''),
      { timeout: 15_000 },
    )
    .toBe(text);
}

/** The value the page shows next to `label` in its facts list. */
async function fact(page: Page, label: string): Promise<string> {
  return (await page.locator(`dl.facts dt:text-is("${label}") + dd`).innerText()).trim();
}

async function consoleAs(context: BrowserContext, loginName: string, password: string, newPassword?: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(`${server.issuer}/ui/console`);
  await page.waitForSelector('input[name=loginName]');
  await screenshot(page, 'console-01-login');
  await signIn(page, loginName, password, newPassword);
  await page.waitForURL(`${server.issuer}/ui/console`);
  return page;
}

describe.runIf(RUN_BROWSER)('admin console', () => {
  let admin: Page;
  let adminContext: BrowserContext;
  let orgId = '';
  const adminPassword = 'Console-Admin-1!';

  it('signs the first administrator in with the password of the first start, which must be changed', async () => {
    const initial = readFileSync(join(server.dataDir, 'sesame-admin.password'), 'utf8').trim();
    adminContext = await browser.newContext({ locale: 'en-US' });
    admin = await consoleAs(adminContext, 'sesame-admin', initial, adminPassword);
    await showsExactly(admin.locator('h1'), 'Overview');
    await shows(admin.locator('header .me'), 'Signed in as Sesame Administrator');
    // An instance owner sees the instance's areas.
    await shows(admin.locator('nav.side'), 'Signing keys');
    // The instance's figures at a glance: this server runs without metrics, and the overview says how to turn them on.
    await shows(admin.locator('main'), 'Metrics are off');
    await screenshot(admin, 'console-02-overview');
  });

  it('creates an organization and works in it', async () => {
    await admin.click('nav.side >> text=Organizations');
    await admin.click('summary:text("New organization")');
    await admin.fill('#f-name', 'Acme');
    await admin.click('form[action="/ui/console/orgs"] button[type=submit]');
    await shows(admin.locator('table'), 'Acme');
    await screenshot(admin, 'console-03-orgs');
    await admin.click('tr:has-text("Acme") button:text("Work in this organization")');
    await admin.waitForURL(/\/ui\/console\?done$|\/ui\/console$/);
    await shows(admin.locator('header .org'), 'Acme');
    const orgs = await api(server, 'POST', '/admin/v1/orgs/_search', { token: server.pat, body: { queries: [{ nameQuery: { name: 'Acme' } }] } });
    orgId = orgs.body.result[0].id;
  });

  let clientId = '';
  let clientSecret = '';
  let projectUrl = '';

  it('creates a project with a role and an OIDC app, whose secret is shown once', async () => {
    await admin.click('nav.side >> text=Projects');
    await admin.click('summary:text("New project")');
    await admin.fill('#f-name', 'Shop');
    await admin.click('form[action="/ui/console/projects"] button[type=submit]');
    await showsExactly(admin.locator('h1'), 'Shop');
    projectUrl = admin.url().replace(/\?done$/, '');
    await admin.click('summary:text("Add role")');
    await admin.fill('#f-key', 'buyer');
    await admin.fill('#f-displayName', 'Buyer');
    await admin.click('form[action$="/roles"] button[type=submit]');
    await admin.locator('table').last().waitFor();
    await shows(admin.locator('body'), 'buyer');

    await admin.click('summary:text("New OIDC application")');
    const form = admin.locator('form[action$="/apps/oidc"]');
    await form.locator('#f-name').fill('Shop web');
    await form.locator('#f-redirectUris').fill(`${rp.origin}/callback`);
    await form.locator('input[name=devMode]').check();
    await form.locator('button[type=submit]').click();
    await shows(admin.locator('section.once'), 'shown only once');
    clientSecret = (await admin.locator('section.once pre.secret').innerText()).trim();
    clientId = await fact(admin, 'Client ID');
    expect(clientSecret.length).toBeGreaterThan(20);
    await screenshot(admin, 'console-04-app-created');
    // Shown once: the app's page, read again, has no secret.
    await admin.goto(admin.url());
    await expect.poll(() => admin.locator('section.once').count()).toBe(0);
    await admin.goto(projectUrl);
    await screenshot(admin, 'console-05-project');
  });

  let aliceLogin = '';

  it('creates a person with a password', async () => {
    await admin.click('nav.side >> text=Users');
    await admin.click('summary:text("New person")');
    const form = admin.locator('form[action="/ui/console/users/human"]');
    await form.locator('#f-userName').fill('alice');
    await form.locator('#f-firstName').fill('Alice');
    await form.locator('#f-lastName').fill('Liddell');
    await form.locator('#f-email').fill('alice@example.com');
    await form.locator('input[name=emailVerified]').check();
    await form.locator('#f-password').fill('Wonderland-42!');
    await form.locator('button[type=submit]').click();
    await showsExactly(admin.locator('h1'), 'Alice Liddell');
    aliceLogin = await fact(admin, 'Login name');
    expect(aliceLogin).toMatch(/^alice@/);
    // Alice may buy in the shop: a grant of the project's role.
    await admin.click('summary:text("Grant roles on a project")');
    await admin.selectOption('select[name=projectId]', { label: 'Shop' });
    await admin.fill('#f-roleKeys', 'buyer');
    await admin.click('form[action$="/grants"] button[type=submit]');
    await shows(admin.locator('main'), 'buyer');
    await screenshot(admin, 'console-06-user');
    await admin.click('nav.side >> text=Users');
    await shows(admin.locator('table'), 'Alice Liddell');
    await screenshot(admin, 'console-07-users');
  });

  it('the person signs in at the app, and the sign-in shows in the activity log', async () => {
    await rp.configure(clientId, clientSecret);
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await context.newPage();
    await page.goto(`${rp.origin}/login`);
    await signIn(page, aliceLogin, 'Wonderland-42!');
    await showsExactly(page.locator('#who'), 'Alice Liddell');
    await context.close();

    await admin.click('nav.side >> text=Activity');
    await admin.fill('#f-type', 'user.human.signed.in');
    await admin.click('form.filters button[type=submit]');
    const row = admin.locator('tbody tr', { hasText: 'Alice Liddell' }).first();
    await shows(row, 'user.human.signed.in');
    await shows(row, 'login');
    await shows(row, clientId);
    await screenshot(admin, 'console-08-activity');

    // The log, unfiltered, names the console's own changes with the administrator as editor.
    await admin.goto(`${server.issuer}/ui/console/activity`);
    await shows(admin.locator('tbody'), 'project.application.added');
    await shows(admin.locator('tbody tr', { hasText: 'user.human.added' }).first(), 'Sesame Administrator');
  });

  it('ends a person’s session from their page, then locks and unlocks them, and shows the API’s refusal of a weak password', async () => {
    await admin.click('nav.side >> text=Users');
    await admin.click('text=Alice Liddell');
    // Her sign-in at the shop (the test before) is a session an administrator sees and ends.
    const aliceId = (await fact(admin, 'ID')).trim();
    const listed = async () => ((await api(server, 'POST', '/v2/sessions/search', { token: server.pat, orgId, body: { queries: [{ userIdQuery: { id: aliceId } }] } })).body.sessions ?? []).length;
    expect(await listed()).toBe(1);
    const row = admin.locator('tr', { has: admin.locator('form[action$="/sessions/end"]') }).first();
    await row.locator('summary').click();
    await row.locator('button:text("Remove for good")').click();
    await admin.locator('.notice.info').waitFor();
    expect(await listed()).toBe(0);
    await admin.click('button:text("Lock")');
    await shows(admin.locator('dl.facts'), 'locked');
    await admin.click('button:text("Unlock")');
    await shows(admin.locator('dl.facts'), 'active');
    await admin.click('summary:text("Set a password")');
    await admin.fill('#f-password', 'short');
    await admin.click('form[action$="/password"] button[type=submit]');
    await admin.locator('.notice.error').waitFor();
    await screenshot(admin, 'console-09-user-refused');
  });

  it('resets a person’s TOTP from their page', async () => {
    const made = await api(server, 'POST', '/management/v1/users/human/_import', {
      token: server.pat,
      orgId,
      body: {
        userName: 'totp-person',
        profile: { firstName: 'Tot', lastName: 'P' },
        email: { email: 'totp@example.com', isEmailVerified: true },
        password: 'Totp-Person-42!',
        otpCode: 'JBSWY3DPEHPK3PXP',
      },
    });
    await admin.goto(`${server.issuer}/ui/console/users/${made.body.userId}`);
    const row = admin.locator('tr', { hasText: 'Authenticator app (TOTP)' });
    await row.locator('summary').click();
    await row.locator('button:text("Remove for good")').click();
    await admin.locator('.notice.info').waitFor();
    expect(await admin.locator('tr', { hasText: 'Authenticator app (TOTP)' }).count()).toBe(0);
    const factors = await api(server, 'POST', `/management/v1/users/${made.body.userId}/auth_factors/_search`, { token: server.pat, orgId, body: {} });
    expect(factors.body.result ?? []).toEqual([]);
    await screenshot(admin, 'console-17-user-factors');

    // A linked account, its ids named in the form (an upstream provider chose them), removed.
    const idp = await api(server, 'POST', '/admin/v1/idps/generic_oidc', {
      token: server.pat,
      body: { name: 'Upstream', issuer: 'https://idp.example.com', clientId: 'sesame', clientSecret: 'shh', scopes: ['openid'], providerOptions: { isLinkingAllowed: true } },
    });
    const link = await api(server, 'POST', `/v2/users/${made.body.userId}/links`, { token: server.pat, orgId, body: { idpLink: { idpId: idp.body.id, userId: '..', userName: 'upstream-name' } } });
    expect(link.status, JSON.stringify(link.body)).toBe(200);
    await admin.goto(`${server.issuer}/ui/console/users/${made.body.userId}`);
    const linkRow = admin.locator('tr', { hasText: 'upstream-name' });
    await linkRow.locator('summary').click();
    await linkRow.locator('button:text("Remove for good")').click();
    await admin.locator('.notice.info').waitFor();
    await showsExactly(admin.locator('h1'), 'Tot P');
    const links = await api(server, 'POST', `/management/v1/users/${made.body.userId}/idps/_search`, { token: server.pat, orgId, body: {} });
    expect(links.body.result ?? []).toEqual([]);
  });

  it('changes a person’s email address and phone number from their page', async () => {
    const made = await api(server, 'POST', '/management/v1/users/human/_import', {
      token: server.pat,
      orgId,
      body: { userName: 'moving-person', profile: { firstName: 'Mo', lastName: 'Ving' }, email: { email: 'old@example.com', isEmailVerified: true }, password: 'Moving-Person-42!' },
    });
    await admin.goto(`${server.issuer}/ui/console/users/${made.body.userId}`);
    await admin.click('summary:text("Change the email address")');
    await admin.fill('#f-email', 'new@example.com');
    await admin.check('form[action$="/email"] input[name=emailVerified]');
    await admin.click('form[action$="/email"] button[type=submit]');
    await admin.locator('.notice.info').waitFor();
    expect(await fact(admin, 'Email')).toBe('new@example.com ✓');
    await admin.click('summary:text("Change the phone number")');
    await admin.fill('#f-phone', '+41 79 123 45 67');
    await admin.click('form[action$="/phone"] button[type=submit]');
    await admin.locator('.notice.info').waitFor();
    expect(await fact(admin, 'Phone')).toBe('+41 79 123 45 67');
    await screenshot(admin, 'console-26-user-contact');
    const stored = await api(server, 'GET', `/management/v1/users/${made.body.userId}`, { token: server.pat, orgId });
    expect(stored.body.user.human).toMatchObject({ email: { email: 'new@example.com', isEmailVerified: true }, phone: { phone: '+41 79 123 45 67' } });
    await admin.click('summary:text("Change the phone number")');
    await admin.locator('form[action$="/phone/remove"]').locator('..').locator('summary').click();
    await admin.click('form[action$="/phone/remove"] button[type=submit]');
    await admin.locator('.notice.info').waitFor();
    expect(await fact(admin, 'Phone')).toBe('');
  });

  it('gives a machine user a key file, shown once, removes the key, and sets and removes metadata', async () => {
    await admin.click('nav.side >> text=Users');
    await admin.click('summary:text("New machine user")');
    const form = admin.locator('form[action="/ui/console/users/machine"]');
    await form.locator('#f-userName').fill('reporter');
    await form.locator('#f-name').fill('Reporter');
    await form.locator('button[type=submit]').click();
    await showsExactly(admin.locator('h1'), 'Reporter');
    const userId = (await fact(admin, 'ID')).trim();

    await admin.click('button:text("New key file")');
    const file = JSON.parse((await admin.locator('pre.secret').textContent()) ?? '') as { type: string; keyId: string; userId: string; key: string };
    expect(file).toMatchObject({ type: 'serviceaccount', userId });
    expect(file.key).toContain('PRIVATE KEY');
    const keyRow = admin.locator('tr', { hasText: file.keyId });
    await keyRow.waitFor();
    // The key file is in the answer to the POST that made it, and nowhere else.
    await admin.goto(`${server.issuer}/ui/console/users/${userId}`);
    expect(await admin.locator('pre.secret').count()).toBe(0);

    await admin.click('summary:text("Set")');
    await admin.fill('#f-key', 'team');
    await admin.fill('#f-value', 'Quarterly reports');
    await admin.click('form[action$="/metadata"] button[type=submit]');
    const metaRow = admin.locator('tr', { hasText: 'Quarterly reports' });
    await shows(metaRow, 'team');
    await screenshot(admin, 'console-22-machine-user');
    const stored = await api(server, 'GET', `/management/v1/users/${userId}/metadata/team`, { token: server.pat, orgId });
    expect(Buffer.from(stored.body.metadata.value, 'base64').toString()).toBe('Quarterly reports');

    await keyRow.locator('summary').click();
    await keyRow.locator('button:text("Remove for good")').click();
    await admin.locator('.notice.info').waitFor();
    expect(await admin.locator('tr', { hasText: file.keyId }).count()).toBe(0);
    await metaRow.locator('summary').click();
    await metaRow.locator('button:text("Remove for good")').click();
    await admin.locator('.notice.info').waitFor();
    expect(await admin.locator('tr', { hasText: 'Quarterly reports' }).count()).toBe(0);
    const keys = await api(server, 'POST', `/management/v1/users/${userId}/keys/_search`, { token: server.pat, orgId, body: {} });
    expect(keys.body.result ?? []).toEqual([]);
  });

  it('makes a person a member of the org, changes the roles, removes the membership; lists the instance’s members', async () => {
    await admin.click('nav.side a[href="/ui/console/members"]');
    await admin.click('summary:text("Make a member")');
    const form = admin.locator('form[action="/ui/console/members"]');
    await form.locator('select[name=userId]').selectOption({ label: `Alice Liddell (${aliceLogin})` });
    await form.locator('input[value=ORG_USER_MANAGER]').check();
    await form.locator('button[type=submit]').click();
    const row = () => admin.locator('tbody tr', { hasText: 'Alice Liddell' });
    await shows(row(), 'ORG_USER_MANAGER');
    await screenshot(admin, 'console-24-members');
    const rolesOfAlice = async () =>
      ((await api(server, 'POST', '/management/v1/orgs/me/members/_search', { token: server.pat, orgId, body: {} })).body.result ?? []).find(
        (m: { preferredLoginName?: string }) => m.preferredLoginName === aliceLogin,
      )?.roles;
    expect(await rolesOfAlice()).toEqual(['ORG_USER_MANAGER']);

    await row().locator('summary:text("Change roles…")').click();
    await row().locator('input[value=ORG_USER_MANAGER]').uncheck();
    await row().locator('input[value=ORG_OWNER_VIEWER]').check();
    await row().locator('button:text("Save")').click();
    await shows(row(), 'ORG_OWNER_VIEWER');
    expect(await rolesOfAlice()).toEqual(['ORG_OWNER_VIEWER']);

    await row().locator('summary:text("Remove…")').click();
    await row().locator('button:text("Remove for good")').click();
    await admin.locator('.notice.info').waitFor();
    expect(await row().count()).toBe(0);
    expect(await rolesOfAlice()).toBeUndefined();

    await admin.click('nav.side a[href="/ui/console/instance/members"]');
    await shows(admin.locator('tbody tr', { hasText: 'Sesame Administrator' }), 'IAM_OWNER');
  });

  it('pages through more users than a page shows, keeping the search', async () => {
    // 100 service users besides the org's others: more than the 100 a page shows.
    await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        api(server, 'POST', '/management/v1/users/machine', { token: server.pat, orgId, body: { userName: `svc-${String(i).padStart(3, '0')}`, name: `Service ${i}` } }),
      ),
    );
    await admin.goto(`${server.issuer}/ui/console/users`);
    await shows(admin.locator('nav[aria-label=pages]'), 'Page 1 of 2');
    expect(await admin.locator('main tbody tr').count()).toBe(100);
    await admin.click('a[rel=next]');
    await shows(admin.locator('nav[aria-label=pages]'), 'Page 2 of 2');
    // Sorted by user name: the last service users are on the second page.
    await shows(admin.locator('main tbody'), 'Service 99');
    await admin.click('a[rel=prev]');
    await shows(admin.locator('main tbody'), 'Alice Liddell');
    // The search narrows the count; one page needs no pager.
    await admin.fill('#f-q', 'svc-09');
    await admin.click('form.filters button[type=submit]');
    expect(await admin.locator('main tbody tr').count()).toBe(10);
    expect(await admin.locator('nav[aria-label=pages]').count()).toBe(0);
    // A page past the end shows the last one.
    await admin.goto(`${server.issuer}/ui/console/users?page=99`);
    await shows(admin.locator('nav[aria-label=pages]'), 'Page 2 of 2');
  });

  it('deactivates and reactivates a project, removes a role from it, and removes it once its app is gone', async () => {
    await admin.click('nav.side >> text=Projects');
    await admin.click('summary:text("New project")');
    await admin.fill('#f-name', 'Old shop');
    await admin.click('form[action="/ui/console/projects"] button[type=submit]');
    await showsExactly(admin.locator('h1'), 'Old shop');
    for (const key of ['seller', 'auditor']) {
      await admin.click('summary:text("Add role")');
      await admin.fill('#f-key', key);
      await admin.click('form[action$="/roles"] button[type=submit]');
      await shows(admin.locator('body'), key);
    }
    await admin.click('summary:text("New API application")');
    await admin.locator('form[action$="/apps/api"] #f-name').fill('Old backend');
    await admin.locator('form[action$="/apps/api"] button[type=submit]').click();
    await admin.locator('section.once').waitFor();
    await admin.click('nav.side >> text=Projects');
    await admin.click('a:text("Old shop")');
    await admin.click('button:text("Deactivate")');
    await shows(admin.locator('dl.facts'), 'deactivated');
    await admin.click('button:text("Reactivate")');
    await shows(admin.locator('dl.facts'), 'active');
    // A role removed (its key in the form); the others stay.
    const auditor = admin.locator('tbody tr', { hasText: 'auditor' });
    await auditor.locator('summary').click();
    await auditor.locator('button:text("Remove for good")').click();
    await admin.locator('.notice.info').waitFor();
    expect(await admin.locator('tbody tr', { hasText: 'auditor' }).count()).toBe(0);
    await shows(admin.locator('body'), 'seller');
    // The project goes only once its app has: the API's refusal, on the page.
    await admin.locator('section.card .actions summary:text("Remove")').click();
    await admin.locator('section.card .actions button:text("Remove for good")').click();
    await shows(admin.locator('.notice.error'), 'remove it first');
    await screenshot(admin, 'console-31-project-remove');
    await admin.click('a:text("Old backend")');
    await admin.locator('.actions summary:text("Remove")').click();
    await admin.locator('.actions button:text("Remove for good")').click();
    await admin.locator('.notice.info').waitFor();
    await admin.locator('section.card .actions summary:text("Remove")').click();
    await admin.locator('section.card .actions button:text("Remove for good")').click();
    await showsExactly(admin.locator('h1'), 'Projects');
    expect(await admin.locator('a:text("Old shop")').count()).toBe(0);
  });

  it('makes an API app that signs with keys: its key file shown once, then removed', async () => {
    await admin.goto(projectUrl);
    await admin.click('summary:text("New API application")');
    const form = admin.locator('form[action$="/apps/api"]');
    await form.locator('#f-name').fill('Reports API');
    await form.locator('select[name=authMethodType]').selectOption('API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT');
    await form.locator('button[type=submit]').click();
    await showsExactly(admin.locator('h1'), 'Reports API');
    // The answer to the POST that made the app is its page; its address is the key form's, less /keys.
    const appUrl = `${server.issuer}${(await admin.locator('form[action$="/keys"]').getAttribute('action'))!.replace(/\/keys$/, '')}`;
    await admin.click('button:text("New key file")');
    const file = JSON.parse((await admin.locator('pre.secret').textContent()) ?? '') as { type: string; keyId: string; clientId: string; key: string };
    expect(file).toMatchObject({ type: 'application', clientId: await fact(admin, 'Client ID') });
    const row = admin.locator('tr', { hasText: file.keyId });
    await row.waitFor();
    await screenshot(admin, 'console-23-app-keys');
    await admin.goto(appUrl);
    expect(await admin.locator('pre.secret').count()).toBe(0);
    await row.locator('summary').click();
    await row.locator('button:text("Remove for good")').click();
    await admin.locator('.notice.info').waitFor();
    expect(await admin.locator('tr', { hasText: file.keyId }).count()).toBe(0);
  });

  it('gives the org a lockout policy of its own, keeps the login policy’s lists when saved, and resets to the default', async () => {
    await admin.click('nav.side >> text=Policies');
    await screenshot(admin, 'console-10-policies');
    await admin.click('ul.links >> text=Lockout');
    await shows(admin.locator('p.intro'), 'follows the instance');
    await admin.fill('#f-maxPasswordAttempts', '3');
    await admin.click('form.card button[type=submit]');
    await admin.locator('.notice.info').waitFor();
    const own = await api(server, 'GET', '/management/v1/policies/lockout', { token: server.pat, orgId });
    expect(own.body.policy).toMatchObject({ maxPasswordAttempts: '3' });
    expect(own.body.policy.isDefault).toBeUndefined();
    await screenshot(admin, 'console-11-policy');
    await admin.click('summary:text("Back to the default…")');
    await admin.click('button:text("Remove for good")');
    await admin.locator('.notice.info').waitFor();
    const back = await api(server, 'GET', '/management/v1/policies/lockout', { token: server.pat, orgId });
    expect(back.body.policy.isDefault).toBe(true);

    // The instance's login policy: its factor lists are not on the form, and saving keeps them.
    const before = (await api(server, 'GET', '/admin/v1/policies/login', { token: server.pat })).body.policy;
    await admin.click('nav.side >> text=Default policies');
    await admin.click('ul.links >> text=Login');
    await admin.click('form.card button[type=submit]');
    await admin.locator('.notice.info').waitFor();
    const after = (await api(server, 'GET', '/admin/v1/policies/login', { token: server.pat })).body.policy;
    expect({ ...after, details: undefined }).toEqual({ ...before, details: undefined });
  });

  it('brands the org: the label policy saved as a preview, a logo uploaded, then activated', async () => {
    await admin.click('nav.side >> text=Policies');
    await admin.click('ul.links >> text=Branding (label)');
    await admin.fill('#f-primaryColor', '#7c3aed');
    await admin.click('form.card button[type=submit]');
    await admin.locator('.notice.info').waitFor();
    // Saved as the preview only: the policy in force is the default's until activated.
    const preview = await api(server, 'GET', '/management/v1/policies/label/_preview', { token: server.pat, orgId });
    expect(preview.body.policy.primaryColor).toBe('#7c3aed');
    expect((await api(server, 'GET', '/management/v1/policies/label', { token: server.pat, orgId })).body.policy.primaryColor).not.toBe('#7c3aed');
    const png = join(mkdtempSync(join(tmpdir(), 'sesame-logo-')), 'logo.png');
    writeFileSync(png, Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64'));
    await admin.setInputFiles('form[action$="/label/logo"] #f-file', png);
    await admin.click('form[action$="/label/logo"] button[type=submit]');
    await admin.locator('.notice.info').waitFor();
    await admin.locator('img.logo-preview').waitFor();
    await admin.click('button:text("Activate")');
    await admin.locator('.notice.info').waitFor();
    const active = (await api(server, 'GET', '/management/v1/policies/label', { token: server.pat, orgId })).body.policy;
    expect(active.primaryColor).toBe('#7c3aed');
    expect(active.logoUrl).toBeTruthy();
    await screenshot(admin, 'console-32-label');
  });

  it('changes the instance’s settings, refused where the API refuses, and sets up email with a test mail', async () => {
    await admin.click('nav.side >> text=Instance settings');
    const security = admin.locator('form[action="/ui/console/settings/security"]');
    await security.locator('input[name=enableImpersonation]').check();
    await security.locator('button[type=submit]').click();
    await admin.locator('.notice.info').waitFor();
    expect((await api(server, 'GET', '/admin/v1/policies/security', { token: server.pat })).body.policy.enableImpersonation).toBe(true);
    // Registration cannot open without the org and project its clients land in: the API's reason shows.
    const registration = admin.locator('form[action="/ui/console/settings/registration"]');
    await registration.locator('input[name=enabled]').check();
    await registration.locator('button[type=submit]').click();
    await shows(admin.locator('.notice.error'), 'cannot be enabled without orgId and projectId');
    expect((await api(server, 'GET', '/admin/v1/settings/dynamic_client_registration', { token: server.pat })).body.settings.enabled).toBeUndefined();
    await screenshot(admin, 'console-18-settings');

    const receiver = await startSmtpReceiver();
    try {
      await admin.click('nav.side >> text=Email (SMTP)');
      await admin.click('summary:text("New SMTP configuration")');
      const form = admin.locator('form[action="/ui/console/smtp"]');
      await form.locator('#f-host').fill(receiver.host);
      await form.locator('input[name=tls]').uncheck();
      await form.locator('#f-senderAddress').fill('console@example.com');
      await form.locator('button[type=submit]').click();
      await admin.locator('.notice.info').waitFor();
      await admin.click('button:text("Activate")');
      // Active now: its row offers to deactivate it.
      await admin.locator('tbody button:text("Deactivate")').waitFor();
      await admin.fill('input[name=receiverAddress]', 'operator@example.com');
      await admin.click('button:text("Send a test mail")');
      await shows(admin.locator('.notice.info'), 'accepted by the relay');
      expect((await receiver.next('operator@example.com')).subject).toBe('Sesame SMTP test');
      await screenshot(admin, 'console-19-smtp');
    } finally {
      await receiver.close();
    }
  });

  it('adds an identity provider of the instance, offers it at the login, withdraws and removes it', async () => {
    await admin.click('nav.side >> text=Instance identity providers');
    await admin.click('summary:text("New OpenID Connect provider")');
    const form = admin.locator('form[action="/ui/console/instance/idps"]');
    await form.locator('#f-name').fill('Corporate SSO');
    await form.locator('#f-issuer').fill('https://sso.example.com');
    await form.locator('#f-clientId').fill('sesame');
    await form.locator('#f-clientSecret').fill('upstream-secret');
    await form.locator('button[type=submit]').click();
    await admin.locator('.notice.info').waitFor();
    const row = admin.locator('tbody tr', { hasText: 'Corporate SSO' });
    await row.locator('button:text("Offer at the login")').click();
    await shows(admin.locator('tbody tr', { hasText: 'Corporate SSO' }), 'offered at the login');
    const offered = await api(server, 'POST', '/admin/v1/policies/login/idps/_search', { token: server.pat, body: {} });
    expect(offered.body.result.map((r: { idpName: string }) => r.idpName)).toContain('Corporate SSO');
    // The secret is write-only: neither the page nor the API shows it.
    expect(await admin.content()).not.toContain('upstream-secret');
    await screenshot(admin, 'console-20-idps');
    await admin.locator('tbody tr', { hasText: 'Corporate SSO' }).locator('button:text("Withdraw")').click();
    await admin.locator('.notice.info').waitFor();
    await admin.locator('tbody tr', { hasText: 'Corporate SSO' }).locator('summary').click();
    await admin.locator('tbody tr', { hasText: 'Corporate SSO' }).locator('button:text("Remove for good")').click();
    await admin.locator('.notice.info').waitFor();
    expect(await admin.locator('tbody tr', { hasText: 'Corporate SSO' }).count()).toBe(0);
  });

  it('exports the org as a download and imports the bundle back, showing the report', async () => {
    await admin.click('nav.side >> text=Import and export');
    await admin.locator('input[name=onlyThisOrg]').check();
    const [download] = await Promise.all([admin.waitForEvent('download'), admin.click('button:text("Download the bundle")')]);
    expect(download.suggestedFilename()).toMatch(/^sesame-export-\d{4}-\d{2}-\d{2}\.json$/);
    const path = await download.path();
    const bundle = JSON.parse(readFileSync(path, 'utf8'));
    expect(bundle.orgs.map((o: { orgId: string }) => o.orgId)).toEqual([orgId]);
    expect(JSON.stringify(bundle)).toContain('alice');
    // The same bundle again: the org exists, so ImportData refuses it whole, and the report says so.
    await admin.setInputFiles('#f-file', path);
    await admin.click('form[action="/ui/console/migration/import"] button[type=submit]');
    // The browser is on the import's own page, which reloads itself until the import is over.
    await admin.waitForURL(/\/ui\/console\/migration\/imports\/\d+$/);
    const jobPage = admin.url();
    await shows(admin.locator('main'), 'What was imported');
    await shows(admin.locator('main'), 'already exists');
    await shows(admin.locator('main h1'), 'Import · Done');
    await screenshot(admin, 'console-21-import');
    // The import page lists it, linked to that page.
    await admin.click('text=Back to import and export');
    const row = admin.locator('tbody tr').first();
    await shows(row, 'Done');
    await shows(row, '0 users, 0 projects, 0 apps imported; 1 refused');
    expect(new URL(jobPage).pathname).toBe(await row.locator('a').getAttribute('href'));
    await screenshot(admin, 'console-27-imports');
  });

  it('shows the signing keys and rotates them', async () => {
    await admin.click('nav.side >> text=Signing keys');
    const before = await admin.locator('tbody tr').count();
    await admin.click('button:text("Rotate now")');
    await admin.locator('.notice.info').waitFor();
    expect(await admin.locator('tbody tr').count()).toBeGreaterThanOrEqual(before);
    await screenshot(admin, 'console-12-keys');
  });

  it('speaks German to a German browser', async () => {
    const context = await browser.newContext({ locale: 'de-DE' });
    await context.addCookies(await adminContext.cookies());
    const page = await context.newPage();
    await page.goto(`${server.issuer}/ui/console/users`);
    await showsExactly(page.locator('h1'), 'Benutzer');
    await shows(page.locator('nav.side'), 'Aktivität');
    await screenshot(page, 'console-13-users-de');
    await context.close();
  });

  it('an org owner sees their org only, and no instance areas', async () => {
    // Bob owns Acme (made through the API as an administrator would).
    const bob = await api(server, 'POST', '/management/v1/users/human', {
      token: server.pat,
      orgId,
      body: { userName: 'bob', profile: { firstName: 'Bob', lastName: 'Owner' }, email: { email: 'bob@example.com', isEmailVerified: true }, initialPassword: 'Owner-Pass-42!' },
    });
    await api(server, 'POST', '/management/v1/orgs/me/members', { token: server.pat, orgId, body: { userId: bob.body.userId, roles: ['ORG_OWNER'] } });
    const { body } = await api(server, 'GET', `/management/v1/users/${bob.body.userId}`, { token: server.pat, orgId });
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await consoleAs(context, body.user.preferredLoginName, 'Owner-Pass-42!');
    await shows(page.locator('header .org'), 'Acme');
    expect(await textOf(page.locator('nav.side'))).not.toContain('Signing keys');
    await page.click('nav.side >> text=Organizations');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);
    // The log of the instance is the instance owners': the API's refusal shows.
    await page.goto(`${server.issuer}/ui/console/activity`);
    await shows(page.locator('.notice.error'), 'events.read');
    await screenshot(page, 'console-14-org-owner');
    // Switching to an org they may not read is refused.
    const defaultOrg = (await api(server, 'GET', '/management/v1/orgs/me', { token: server.pat })).body.org.id;
    const csrf = await page.locator('input[name=csrf]').first().inputValue();
    const switched = await context.request.post(`${server.issuer}/ui/console/org`, { form: { csrf, orgId: defaultOrg }, maxRedirects: 0 });
    const switchedStatus = switched.status();
    expect(switchedStatus).toBe(404);
    await context.close();
  });

  it('a person without roles manages their own account: sessions ended, the password, email and phone changed', async () => {
    // Signed in at the shop in one browser (the lock above ended her earlier session there)…
    const shop = await browser.newContext({ locale: 'en-US' });
    const shopPage = await shop.newPage();
    await shopPage.goto(`${rp.origin}/login`);
    await signIn(shopPage, aliceLogin, 'Wonderland-42!');
    await shows(shopPage.locator('#who'), 'Alice Liddell');
    await shop.close();
    // …and at the console in another.
    const context = await browser.newContext({ locale: 'en-US' });
    const page = await consoleAs(context, aliceLogin, 'Wonderland-42!');
    // No administration: the lists show nothing of others, and no instance areas.
    expect(await textOf(page.locator('nav.side'))).not.toContain('Signing keys');
    await page.click('nav.side >> text=My account');
    await showsExactly(page.locator('h1'), 'My account');
    // The sign-in at the shop (another browser) and this one.
    await expect.poll(() => page.locator('tbody tr').count()).toBe(2);
    await shows(page.locator('tbody'), 'this browser');
    await screenshot(page, 'console-16-account');
    await page.click('tbody button:text("End")');
    await page.locator('.notice.info').waitFor();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(1);

    // A wrong current password is refused (and counted as the login counts it).
    await page.click('summary:text("Change my password")');
    await page.fill('#f-oldPassword', 'not-it');
    await page.fill('#f-newPassword', 'Looking-Glass-7!');
    await page.click('form[action="/ui/console/me/password"] button[type=submit]');
    await shows(page.locator('.notice.error'), 'old password is wrong');
    await page.click('summary:text("Change my password")');
    await page.fill('#f-oldPassword', 'Wonderland-42!');
    await page.fill('#f-newPassword', 'Looking-Glass-7!');
    await page.click('form[action="/ui/console/me/password"] button[type=submit]');
    // Every session ended with the old password, this one too: the login asks again.
    await page.locator('input[name=loginName]').waitFor();
    await signIn(page, aliceLogin, 'Looking-Glass-7!');
    await page.waitForURL(`${server.issuer}/ui/console/me`);
    await showsExactly(page.locator('h1'), 'My account');

    // Her email address, changed from a sign-in of moments ago: the new address gets a code, entered here.
    const receiver = await startSmtpReceiver();
    try {
      const smtp = await api(server, 'POST', '/admin/v1/smtp', { token: server.pat, body: { senderAddress: 'login@example.com', host: receiver.host } });
      expect((await api(server, 'POST', `/admin/v1/smtp/${smtp.body.id}/_activate`, { token: server.pat, body: {} })).status).toBe(200);
      await page.click('summary:text("Change the email address")');
      await page.fill('form[action="/ui/console/me/email"] #f-email', 'alice.liddell@example.com');
      await page.click('form[action="/ui/console/me/email"] button[type=submit]');
      await page.locator('.notice.info').waitFor();
      await shows(page.locator('dl.facts'), 'alice.liddell@example.com (not verified)');
      const mail = await receiver.next('alice.liddell@example.com');
      const code = new URL(mail.links.find((l) => new URL(l).pathname === '/ui/login/mail/verification')!).searchParams.get('code')!;
      await page.fill('form[action="/ui/console/me/email/verify"] #f-code', code);
      await page.click('form[action="/ui/console/me/email/verify"] button[type=submit]');
      await page.locator('.notice.info').waitFor();
      await shows(page.locator('dl.facts'), 'alice.liddell@example.com ✓');
    } finally {
      await receiver.close();
    }
    // Six minutes later the sign-in is too old to change her phone number: the page offers a new one, and comes back.
    clock.advance(6 * 60_000);
    await page.click('summary:text("Change the phone number")');
    await page.fill('form[action="/ui/console/me/phone"] #f-phone', '+44 20 7946 0000');
    await page.click('form[action="/ui/console/me/phone"] button[type=submit]');
    await shows(page.locator('.notice.error'), 'sign in again first');
    await screenshot(page, 'console-28-account-sign-in-again');
    await page.click('.notice.error a:text("Sign in again")');
    await page.locator('input[name=password]').waitFor();
    await page.fill('input[name=password]', 'Looking-Glass-7!');
    await page.click('form[action="/ui/login/password"] button[type=submit]');
    await page.waitForURL(`${server.issuer}/ui/console/me`);
    await page.click('summary:text("Change the phone number")');
    await page.fill('form[action="/ui/console/me/phone"] #f-phone', '+44 20 7946 0000');
    await page.click('form[action="/ui/console/me/phone"] button[type=submit]');
    await page.locator('.notice.info').waitFor();
    await shows(page.locator('dl.facts'), '+44 20 7946 0000 (not verified)');
    await screenshot(page, 'console-29-account-contact');

    // An authenticator app, set up here: the key shown in the answer, confirmed with a code from it.
    await page.click('button:text("Set up an authenticator app")');
    const key = (await page.locator('section.once code').innerText()).trim();
    await screenshot(page, 'console-25-account-totp');
    // A mistyped code: refused, and the same key stays on the page.
    // Codes of the time the server follows (moved on above).
    await page.fill('#f-code', totpAt(key, clock.now() / 1000) === '000000' ? '111111' : '000000');
    await page.click('form[action="/ui/console/me/otp/verify"] button[type=submit]');
    await shows(page.locator('.notice.error'), 'code is wrong');
    expect((await page.locator('section.once code').innerText()).trim()).toBe(key);
    await page.fill('#f-code', totpAt(key, clock.now() / 1000));
    await page.click('form[action="/ui/console/me/otp/verify"] button[type=submit]');
    await page.locator('.notice.info').waitFor();
    await shows(page.locator('main'), 'Authenticator app (TOTP)');
    expect(await page.locator('button:text("Set up an authenticator app")').count()).toBe(0);

    // A security key, added here: the browser's (virtual) authenticator answers the ceremony.
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'usb', hasResidentKey: false, hasUserVerification: false, automaticPresenceSimulation: true },
    } as never);
    // Not while the login policy does not offer security keys.
    await page.click('button:text("Add a security key")');
    await shows(page.locator('.notice.error'), 'does not offer security keys');
    const policy = (await api(server, 'GET', '/admin/v1/policies/login', { token: server.pat })).body.policy;
    const offered = await api(server, 'PUT', '/admin/v1/policies/login', { token: server.pat, body: { ...policy, secondFactors: [...(policy.secondFactors ?? []), 'SECOND_FACTOR_TYPE_U2F'] } });
    expect(offered.status, JSON.stringify(offered.body)).toBe(200);
    await page.click('button:text("Add a security key")');
    await page.fill('#webauthn-form #f-name', 'Blue key');
    await screenshot(page, 'console-30-account-security-key');
    await page.click('#webauthn-start');
    await page.locator('.notice.info').waitFor();
    // Listed among her second factors (ListMyAuthFactors), by the name she gave it.
    await shows(page.locator('main'), 'Blue key');
    await context.close();
  }, 120_000);

  it('refuses a form without its CSRF token', async () => {
    // The browser's cookies, a form without the token (what another site's form would post).
    const forged = await adminContext.request.post(`${server.issuer}/ui/console/projects`, { form: { name: 'Forged' }, maxRedirects: 0 });
    const status = forged.status();
    expect(status).toBe(403);
    // Never framed, whatever the login's embedding policy; its cookie never SameSite=None.
    const home = await adminContext.request.get(`${server.issuer}/ui/console/projects`, { maxRedirects: 0 });
    expect(home.headers()['x-frame-options']).toBe('DENY');
    expect(home.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    expect((await adminContext.cookies()).find((c) => c.name === 'sesame.console')?.sameSite).toBe('Lax');
    const projects = await api(server, 'POST', '/management/v1/projects/_search', { token: server.pat, orgId, body: { queries: [{ nameQuery: { name: 'Forged' } }] } });
    expect(projects.body.result ?? []).toHaveLength(0);
  });

  it('signs out of the console and the login', async () => {
    await admin.goto(`${server.issuer}/ui/console`);
    await admin.click('header button:text("Sign out")');
    await showsExactly(admin.locator('h1'), 'Signed out');
    await screenshot(admin, 'console-15-signed-out');
    // Back to the console: the login asks for a name again (the login session ended with it).
    await admin.goto(`${server.issuer}/ui/console`);
    await admin.locator('input[name=loginName]').waitFor();
    await adminContext.close();
  });
});
