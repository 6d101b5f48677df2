import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, RUN_BROWSER, screenshot as shot } from './helpers/browser.js';
import { api } from './helpers/api.js';
import { createWebApp, uniqueName, type WebApp } from './helpers/oidc.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { startSmtpReceiver, type SmtpReceiver } from './helpers/smtp-receiver.js';

/**
 * Chromium through the pages that mail brings: a password reset from "Forgot your password?" with
 * the link opened from the mail, in English; an email verification and an account initialization
 * in German under an org's label and privacy policies. Each page is saved under test/artifacts/.
 */
const REDIRECT = 'http://localhost:9999/callback';

let server: InProcessServer;
let browser: Browser;
let receiver: SmtpReceiver;
let web: WebApp;
const clock = TestClock.followingSystem();

const call = (method: string, path: string, body?: unknown, orgId?: string) => api(server, method, path, { token: server.pat, body, orgId });
const linkTo = (links: string[], path: string) => links.find((l) => new URL(l).pathname === path)!;

async function person(orgId: string | undefined, options: { verified: boolean; password?: string; language: string }) {
  const userName = uniqueName('bm');
  const res = await call(
    'POST',
    '/management/v1/users/human/_import',
    {
      userName,
      profile: { firstName: 'Bea', lastName: 'Mail', preferredLanguage: options.language },
      email: { email: `${userName}@example.com`, isEmailVerified: options.verified },
      ...(options.password ? { password: options.password } : {}),
    },
    orgId,
  );
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const user = await call('GET', `/management/v1/users/${res.body.userId}`, undefined, orgId);
  return { email: `${userName}@example.com`, loginName: user.body.user.preferredLoginName as string };
}

/** A page whose client callback is answered by the test (the browser does not leave for a real app). */
async function newPage(): Promise<Page> {
  const page = await browser.newPage();
  await page.route(`${REDIRECT}**`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<h1>Back at the app</h1>' }));
  return page;
}

const authorize = (extra: Record<string, string> = {}) =>
  `${server.issuer}/oauth/v2/authorize?${new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 's', ...extra })}`;

beforeAll(async () => {
  if (!RUN_BROWSER) return;
  receiver = await startSmtpReceiver();
  server = await startInProcess({ clock });
  browser = await launchChromium();
  web = await createWebApp(server);
  const smtp = await call('POST', '/admin/v1/smtp', { senderAddress: 'login@example.com', host: receiver.host });
  expect((await call('POST', `/admin/v1/smtp/${smtp.body.id}/_activate`, {})).status).toBe(200);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await receiver?.close();
});

describe.runIf(RUN_BROWSER)('mail in the browser', () => {
  it('resets a forgotten password from the login, with the link from the mail (English)', async () => {
    const ada = await person(undefined, { verified: true, password: 'Old-Password-1', language: 'en' });
    const page = await newPage();
    await page.goto(authorize({ ui_locales: 'en' }));
    await page.fill('#loginName', ada.loginName);
    await page.click('button[type=submit]');
    await page.waitForSelector('text=Forgot your password?');
    await shot(page, 'mail-en-password-with-reset-link');
    await page.click('text=Forgot your password?');
    await page.waitForSelector('h1:has-text("Reset your password")');
    await shot(page, 'mail-en-reset-step');
    const mail = await receiver.next(ada.email);
    expect(mail.subject).toBe('Reset password');
    await page.goto(linkTo(mail.links, '/ui/login/password/init'));
    expect(await page.inputValue('#code')).toMatch(/^[A-Z0-9]{6}$/);
    await page.fill('#password', 'short');
    await page.fill('#passwordConfirm', 'short');
    await page.click('form[action="/ui/login/password/init"] button');
    await page.waitForSelector('.error');
    expect(await page.textContent('.error')).toContain('at least 8 characters');
    await page.fill('#password', 'New-Password-2');
    await page.fill('#passwordConfirm', 'New-Password-2');
    await page.click('form[action="/ui/login/password/init"] button');
    await page.waitForSelector('.info');
    await shot(page, 'mail-en-reset-done');
    await page.fill('#password', 'New-Password-2');
    await page.click('form[action="/ui/login/password"] button');
    await page.waitForURL(`${REDIRECT}**`);
    expect(new URL(page.url()).searchParams.get('code')).toBeTruthy();
    await page.close();
  });

  it("verifies an address and sets up an account, in German, in an org's colours with its links", async () => {
    const org = await call('POST', '/management/v1/orgs', { name: uniqueName('marke') });
    const orgId = org.body.id as string;
    expect((await call('POST', '/management/v1/policies/label', { primaryColor: '#0b7a3b', backgroundColor: '#f3f8f4', hideLoginNameSuffix: true }, orgId)).status).toBe(200);
    expect((await call('POST', '/management/v1/policies/label/_activate', {}, orgId)).status).toBe(200);
    expect(
      (await call('POST', '/management/v1/policies/privacy', { tosLink: 'https://example.com/agb', privacyLink: 'https://example.com/datenschutz', supportEmail: 'hilfe@example.com' }, orgId)).status,
    ).toBe(200);
    const scope = `openid urn:zitadel:iam:org:id:${orgId}`;

    // An unverified address: the step after the password, the code from the German mail.
    const ben = await person(orgId, { verified: false, password: 'Passwort-Ben-1', language: 'de' });
    const welcome = await receiver.next(ben.email);
    expect(welcome.subject).toBe('E-Mail verifizieren');
    expect(welcome.language).toBe('de');
    const code = new URL(linkTo(welcome.links, '/ui/login/mail/verification')).searchParams.get('code')!;
    const page = await newPage();
    await page.goto(authorize({ ui_locales: 'de', scope }));
    await page.fill('#loginName', ben.loginName);
    await page.click('button[type=submit]');
    await page.fill('#password', 'Passwort-Ben-1');
    await page.click('form[action="/ui/login/password"] button');
    await page.waitForSelector('h1:has-text("E-Mail-Adresse bestätigen")');
    expect(await page.textContent('.user-chip')).not.toContain('@');
    expect(await page.getAttribute('a[href="https://example.com/agb"]', 'href')).toBeTruthy();
    // The org's colour is the accent of the page.
    const accent = await page.$eval('button[type=submit]', (b) => (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(b).backgroundColor);
    expect(accent).toBe('rgb(11, 122, 59)');
    await shot(page, 'mail-de-verify-email');
    await page.fill('#code', code);
    await page.click('form[action="/ui/login/mail/verification"] button');
    await page.waitForURL(`${REDIRECT}**`);
    await page.close();

    // A person without a password: the initialization link opened in a fresh browser.
    const cara = await person(orgId, { verified: false, language: 'de' });
    const init = await receiver.next(cara.email);
    expect(init.subject).toBe('Benutzer initialisieren');
    const context = await browser.newContext({ locale: 'de-DE' });
    const fresh = await context.newPage();
    await fresh.goto(linkTo(init.links, '/ui/login/user/init'));
    await fresh.waitForSelector('h1:has-text("Konto einrichten")');
    await shot(fresh, 'mail-de-init');
    await fresh.fill('#password', 'Erstes-Passwort-1');
    await fresh.fill('#passwordConfirm', 'Erstes-Passwort-1');
    await fresh.click('form[action="/ui/login/user/init"] button');
    await fresh.waitForSelector('h1:has-text("Konto eingerichtet")');
    await shot(fresh, 'mail-de-init-done');
    await context.close();
  });
});
