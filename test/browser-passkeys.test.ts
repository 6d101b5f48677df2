import type { Browser, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, RUN_BROWSER, screenshot as shot } from './helpers/browser.js';
import { api } from './helpers/api.js';
import { createHuman, createWebApp, exchangeCode, uniqueName, type WebApp } from './helpers/oidc.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { startSmtpReceiver, type SmtpReceiver } from './helpers/smtp-receiver.js';

/**
 * Passkeys and security keys in Chromium, with its virtual authenticator (DevTools
 * `WebAuthn.addVirtualAuthenticator`): a passkey registered from a mailed link and used to sign in
 * (`amr` user mfa), a ceremony the authenticator refuses, a security key enrolled at the
 * enrollment step and asked for after the password, the offer of a passkey after a password
 * sign-in; a removed key signs nothing in. English and German; screenshots test/artifacts/passkey-*.png.
 */
const REDIRECT = 'http://localhost:9999/callback';

let server: InProcessServer;
let browser: Browser;
let receiver: SmtpReceiver;
let web: WebApp;
const clock = TestClock.followingSystem();

const call = (method: string, path: string, body?: unknown, orgId?: string) => api(server, method, path, { token: server.pat, body, orgId });
const authorize = (extra: Record<string, string> = {}) =>
  `${server.issuer}/oauth/v2/authorize?${new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 's', ...extra })}`;

/** A page with a virtual authenticator: a platform passkey (resident, verifying the user) or a USB security key. */
async function pageWithAuthenticator(kind: 'passkey' | 'security-key'): Promise<{ page: Page; cdp: CDPSession; authenticatorId: string }> {
  const page = await browser.newPage();
  await page.route(`${REDIRECT}**`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<h1>Back at the app</h1>' }));
  page.setDefaultTimeout(10_000);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const options =
    kind === 'passkey'
      ? { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true }
      : { protocol: 'ctap2', transport: 'usb', hasResidentKey: false, hasUserVerification: false, automaticPresenceSimulation: true };
  const { authenticatorId } = (await cdp.send('WebAuthn.addVirtualAuthenticator', { options } as never)) as { authenticatorId: string };
  return { page, cdp, authenticatorId };
}

async function setPolicy(changes: Record<string, unknown>, orgId?: string): Promise<void> {
  const path = orgId ? '/management/v1/policies/login' : '/admin/v1/policies/login';
  const current = await call('GET', path, undefined, orgId);
  const res = await call(orgId ? 'POST' : 'PUT', path, { ...current.body.policy, ...changes }, orgId);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

beforeAll(async () => {
  if (!RUN_BROWSER) return;
  receiver = await startSmtpReceiver();
  server = await startInProcess({ clock });
  browser = await launchChromium();
  web = await createWebApp(server);
  const smtp = await call('POST', '/admin/v1/smtp', { senderAddress: 'login@example.com', host: receiver.host });
  expect((await call('POST', `/admin/v1/smtp/${smtp.body.id}/_activate`, {})).status).toBe(200);
  await setPolicy({ passwordlessType: 'PASSWORDLESS_TYPE_ALLOWED', secondFactors: ['SECOND_FACTOR_TYPE_OTP', 'SECOND_FACTOR_TYPE_U2F'], multiFactors: ['MULTI_FACTOR_TYPE_U2F_WITH_VERIFICATION'] });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await receiver?.close();
});

describe.runIf(RUN_BROWSER)('passkeys and security keys in the browser', () => {
  it('registers a passkey from a mailed link, signs in with it, and a removed one signs nothing in (English)', async () => {
    const person = await createHuman(server);
    const sent = await call('POST', `/management/v1/users/${person.userId}/passwordless/_send_link`, {});
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const mail = await receiver.next(`${person.userName}@example.com`);
    const link = mail.links.find((l) => new URL(l).pathname === '/ui/login/passwordless/init')!;
    const { page } = await pageWithAuthenticator('passkey');
    await page.goto(`${link}&ui_locales=en`);
    await page.waitForSelector('#webauthn-start:not([disabled])');
    await shot(page, 'passkey-en-register-by-link');
    await page.fill('#name', 'Laptop');
    await page.click('#webauthn-start');
    await page.waitForSelector('h1:has-text("Passkey added")');
    const listed = await call('POST', `/management/v1/users/${person.userId}/passwordless/_search`, {});
    expect(listed.body.result).toEqual([expect.objectContaining({ name: 'Laptop', state: 'AUTH_FACTOR_STATE_READY' })]);
    // The link's code is used up.
    const again = await page.goto(link);
    expect(again!.status()).toBe(400);

    await page.goto(authorize({ ui_locales: 'en' }));
    await page.fill('#loginName', person.loginName);
    await page.click('button[type=submit]');
    await page.waitForSelector('#webauthn-start:not([disabled])');
    await shot(page, 'passkey-en-sign-in');
    await page.click('#webauthn-start');
    await page.waitForSelector('text=Back at the app');
    const tokens = await exchangeCode(server, web, page.url());
    expect(tokens.claims.amr).toEqual(['user', 'mfa']);

    // Removed: the passkey step is gone, the password is asked.
    const tokenId = listed.body.result[0].id as string;
    expect((await call('DELETE', `/management/v1/users/${person.userId}/passwordless/${tokenId}`)).status).toBe(200);
    await page.goto(authorize({ ui_locales: 'en', prompt: 'login' }));
    await page.fill('#loginName', person.loginName);
    await page.click('button[type=submit]');
    await page.waitForSelector('#password');
    await page.close();
  });

  it('refuses a passkey answer whose signature does not verify; the password still works, and the passkey is then the multi factor (German)', async () => {
    const person = await createHuman(server);
    const { link } = (await call('POST', `/management/v1/users/${person.userId}/passwordless/_link`, {})).body as { link: string };
    const { page, cdp, authenticatorId } = await pageWithAuthenticator('passkey');
    await page.goto(`${link}&ui_locales=de`);
    await page.waitForSelector('#webauthn-start:not([disabled])');
    await shot(page, 'passkey-de-register-by-link');
    await page.click('#webauthn-start:not([disabled])');
    await page.waitForSelector('h1:has-text("Passkey hinzugefügt")').catch(async (error: unknown) => {
      throw new Error(`${String(error)}\n${link}\n${(await page.content()).slice(0, 3000)}`);
    });
    // The authenticator answers with a bad signature: Sesame refuses the answer.
    await cdp.send('WebAuthn.setResponseOverrideBits', { authenticatorId, isBogusSignature: true } as never);
    await page.goto(authorize({ ui_locales: 'de' }));
    await page.fill('#loginName', person.loginName);
    await page.click('button[type=submit]');
    await page.waitForSelector('#webauthn-start:not([disabled])');
    await shot(page, 'passkey-de-sign-in');
    await page.click('#webauthn-start:not([disabled])');
    await page.waitForSelector('p.error');
    expect(await page.textContent('p.error')).toContain('Der Schlüssel hat nicht geantwortet');
    await shot(page, 'passkey-de-refused');
    await page.click('button:has-text("Stattdessen mein Passwort verwenden")');
    await page.fill('#password', person.password);
    await page.click('button[type=submit]');
    // The policy's U2F_WITH_VERIFICATION: after the password, the passkey is the second factor.
    await page.waitForSelector('h1:has-text("Sicherheitsschlüssel verwenden")');
    await cdp.send('WebAuthn.setResponseOverrideBits', { authenticatorId, isBogusSignature: false } as never);
    await page.click('#webauthn-start:not([disabled])');
    await page.waitForSelector('text=Back at the app');
    expect((await exchangeCode(server, web, page.url())).claims.amr).toEqual(['pwd', 'user', 'mfa']);
    await page.close();
  });

  it('enrolls a security key where the org forces a second factor, then asks for it after the password (German)', async () => {
    const org = await call('POST', '/management/v1/orgs', { name: uniqueName('keys') });
    const orgId = org.body.id as string;
    await setPolicy({ allowUsernamePassword: true, forceMfa: true, secondFactors: ['SECOND_FACTOR_TYPE_U2F'], passwordlessType: 'PASSWORDLESS_TYPE_NOT_ALLOWED' }, orgId);
    const person = await createHuman(server, { orgId });
    const { page } = await pageWithAuthenticator('security-key');
    await page.goto(authorize({ ui_locales: 'de', scope: `openid urn:zitadel:iam:org:id:${orgId}` }));
    await page.fill('#loginName', person.loginName);
    await page.click('button[type=submit]');
    await page.fill('#password', person.password);
    await page.click('button[type=submit]');
    await page.waitForSelector('h1:has-text("Sicherheitsschlüssel hinzufügen")');
    await page.waitForSelector('#webauthn-start:not([disabled])');
    await shot(page, 'passkey-de-security-key-setup');
    await page.click('#webauthn-start');
    await page.waitForSelector('text=Back at the app');
    expect((await exchangeCode(server, web, page.url())).claims.amr).toEqual(['pwd', 'user', 'mfa']);
    const factors = await call('POST', `/management/v1/users/${person.userId}/auth_factors/_search`, {}, orgId);
    expect(factors.body.result).toEqual([expect.objectContaining({ u2f: expect.objectContaining({ name: expect.any(String) }) })]);

    await page.goto(authorize({ ui_locales: 'de', scope: `openid urn:zitadel:iam:org:id:${orgId}`, prompt: 'login' }));
    await page.fill('#loginName', person.loginName);
    await page.click('button[type=submit]');
    await page.fill('#password', person.password);
    await page.click('button[type=submit]');
    await page.waitForSelector('h1:has-text("Sicherheitsschlüssel verwenden")');
    await shot(page, 'passkey-de-security-key');
    await page.click('#webauthn-start:not([disabled])');
    await page.waitForSelector('text=Back at the app');
    expect((await exchangeCode(server, web, page.url())).claims.amr).toEqual(['pwd', 'user', 'mfa']);
    // The same step in English.
    await page.goto(authorize({ ui_locales: 'en', scope: `openid urn:zitadel:iam:org:id:${orgId}`, prompt: 'login' }));
    await page.fill('#loginName', person.loginName);
    await page.click('button[type=submit]');
    await page.fill('#password', person.password);
    await page.click('button[type=submit]');
    await page.waitForSelector('h1:has-text("Use your security key")');
    await shot(page, 'passkey-en-security-key');
    await page.close();
    // The enrollment page in English: another person of the org.
    const second = await createHuman(server, { orgId });
    const { page: english } = await pageWithAuthenticator('security-key');
    await english.goto(authorize({ ui_locales: 'en', scope: `openid urn:zitadel:iam:org:id:${orgId}` }));
    await english.fill('#loginName', second.loginName);
    await english.click('button[type=submit]');
    await english.fill('#password', second.password);
    await english.click('button[type=submit]');
    await english.waitForSelector('h1:has-text("Add a security key")');
    await english.waitForSelector('#webauthn-start:not([disabled])');
    await shot(english, 'passkey-en-security-key-setup');
    await english.close();
  });

  it('offers a passkey after a password sign-in; skipped, it is not offered again (English, German)', async () => {
    const person = await createHuman(server);
    const { page } = await pageWithAuthenticator('passkey');
    const signIn = async (who: { loginName: string; password: string }, locale: string) => {
      await page.goto(authorize({ ui_locales: locale, prompt: 'login' }));
      await page.fill('#loginName', who.loginName);
      await page.click('button[type=submit]');
      await page.fill('#password', who.password);
      await page.click('button[type=submit]');
    };
    await signIn(person, 'en');
    await page.waitForSelector('h1:has-text("Add a passkey")');
    await shot(page, 'passkey-en-offered');
    await page.click('button:has-text("Not now")');
    await page.waitForSelector('text=Back at the app');
    await signIn(person, 'en');
    await page.waitForSelector('text=Back at the app');
    const other = await createHuman(server);
    await signIn(other, 'de');
    await page.waitForSelector('h1:has-text("Passkey hinzufügen")');
    await shot(page, 'passkey-de-offered');
    await page.click('button:has-text("Nicht jetzt")');
    await page.waitForSelector('text=Back at the app');
    await page.close();
  });
});
