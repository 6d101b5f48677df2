import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, RUN_BROWSER, screenshot as shot } from './helpers/browser.js';
import { api } from './helpers/api.js';
import { createHuman, createWebApp, uniqueName, type WebApp } from './helpers/oidc.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { startUpstreamIdp, type UpstreamIdp } from './helpers/upstream-idp.js';
import { RUN_LDAP, startLdapServer, type LdapServer } from './helpers/ldap-server.js';

/**
 * Chromium through the sign-in with identity providers, in English and German: the login page
 * with the providers' buttons, the round trip to an OpenID provider (oidc-provider) and the page
 * of an account linked to nobody (create, or sign in to link), the LDAP form with a wrong and a
 * right password. Each page is saved under test/artifacts/idp-*.png.
 */
const REDIRECT = 'http://localhost:9999/callback';
const CALLBACK = '/ui/login/login/externalidp/callback';

let server: InProcessServer;
let browser: Browser;
let upstream: UpstreamIdp;
let ldap: LdapServer | undefined;
let web: WebApp;
let oidcName: string;
const clock = TestClock.followingSystem();

const call = (method: string, path: string, body?: unknown) => api(server, method, path, { token: server.pat, body });
const authorize = (extra: Record<string, string> = {}) =>
  `${server.issuer}/oauth/v2/authorize?${new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid email profile', state: 's', ...extra })}`;

async function newPage(): Promise<Page> {
  const page = await browser.newPage();
  await page.route(`${REDIRECT}**`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<h1>Back at the app</h1>' }));
  return page;
}

async function offer(path: string, body: Record<string, unknown>): Promise<string> {
  const added = await call('POST', `/admin/v1/idps/${path}`, body);
  expect(added.status, JSON.stringify(added.body)).toBe(200);
  expect((await call('POST', '/admin/v1/policies/login/idps', { idpId: added.body.id, ownerType: 'IDP_OWNER_TYPE_SYSTEM' })).status).toBe(200);
  return added.body.id;
}

beforeAll(async () => {
  if (!RUN_BROWSER) return;
  server = await startInProcess({ clock });
  upstream = await startUpstreamIdp(`${server.issuer}${CALLBACK}`);
  browser = await launchChromium();
  web = await createWebApp(server);
  const current = await call('GET', '/admin/v1/policies/login');
  expect((await call('PUT', '/admin/v1/policies/login', { ...current.body.policy, allowExternalIdp: true })).status).toBe(200);
  oidcName = 'Corp Account';
  await offer('generic_oidc', {
    name: oidcName,
    issuer: upstream.issuer,
    clientId: upstream.clientId,
    clientSecret: upstream.clientSecret,
    usePkce: true,
    providerOptions: { isLinkingAllowed: true, isCreationAllowed: true },
  });
  if (RUN_LDAP) {
    ldap = await startLdapServer();
    await ldap.addPerson({ uid: 'dora', password: 'Directory-Pass-2', givenName: 'Dora', sn: 'Tree', mail: 'dora@ldap.example' });
    await offer('ldap', {
      name: 'Verzeichnis',
      servers: [ldap.url],
      baseDn: ldap.baseDn,
      bindDn: ldap.adminDn,
      bindPassword: ldap.adminPassword,
      userBase: 'dn',
      userObjectClasses: ['inetOrgPerson'],
      userFilters: ['uid'],
      attributes: { idAttribute: 'uid', firstNameAttribute: 'givenName', lastNameAttribute: 'sn', emailAttribute: 'mail', preferredUsernameAttribute: 'uid' },
      providerOptions: { isCreationAllowed: true, isAutoCreation: true },
    });
  }
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await upstream?.close();
  await ldap?.close();
});

describe.runIf(RUN_BROWSER)('identity providers in the browser', () => {
  it('signs in with an OpenID provider and creates the account (English)', async () => {
    const account = uniqueName('chrome');
    upstream.as(account, { email: `${account}@corp.example`, email_verified: true, given_name: 'Chris', family_name: 'Rome', preferred_username: account });
    const page = await newPage();
    await page.goto(authorize({ ui_locales: 'en' }));
    await page.waitForSelector(`button:has-text("Sign in with ${oidcName}")`);
    await shot(page, 'idp-en-login-with-providers');
    await page.click(`button:has-text("Sign in with ${oidcName}")`);
    await page.waitForSelector('h1:has-text("New here?")');
    expect(await page.inputValue('#userName')).toBe(account);
    await shot(page, 'idp-en-account-not-linked');
    await page.click('button:has-text("Create an account")');
    await page.waitForSelector('text=Back at the app');
    expect(new URL(page.url()).searchParams.get('code')).toBeTruthy();
    await page.close();
    if (RUN_LDAP) {
      // The LDAP form in English too.
      const ldapPage = await newPage();
      await ldapPage.goto(authorize({ ui_locales: 'en', prompt: 'login' }));
      await ldapPage.click('button:has-text("Sign in with Verzeichnis")');
      await ldapPage.waitForSelector('#username');
      await shot(ldapPage, 'idp-en-ldap');
      await ldapPage.close();
    }
  });

  it('links an account to an existing one after signing in to it (German)', async () => {
    const person = await createHuman(server);
    upstream.as(uniqueName('verknuepft'), { email: 'other@corp.example', email_verified: true });
    const page = await newPage();
    await page.goto(authorize({ ui_locales: 'de' }));
    await page.waitForSelector(`button:has-text("Mit ${oidcName} anmelden")`);
    await shot(page, 'idp-de-login-with-providers');
    await page.click(`button:has-text("Mit ${oidcName} anmelden")`);
    await page.waitForSelector('h1:has-text("Neu hier?")');
    await shot(page, 'idp-de-account-not-linked');
    await page.click('button:has-text("Ich habe bereits ein Konto")');
    await page.waitForSelector('#loginName');
    await shot(page, 'idp-de-sign-in-to-link');
    await page.fill('#loginName', person.loginName);
    await page.click('button[type=submit]');
    await page.fill('#password', person.password);
    await page.click('button[type=submit]');
    await page.waitForSelector('text=Back at the app');
    const links = await call('POST', `/v2/users/${person.userId}/links/_search`, {});
    expect(links.body.result).toHaveLength(1);
    await page.close();
  });

  it.runIf(RUN_LDAP)('signs in at an LDAP directory: a wrong, then the right password (German)', async () => {
    const page = await newPage();
    await page.goto(authorize({ ui_locales: 'de' }));
    await page.click('button:has-text("Mit Verzeichnis anmelden")');
    await page.waitForSelector('#username');
    await shot(page, 'idp-de-ldap');
    await page.fill('#username', 'dora');
    await page.fill('#password', 'falsch');
    await page.click('button[type=submit]');
    await page.waitForSelector('p.error');
    await shot(page, 'idp-de-ldap-wrong-password');
    await page.fill('#password', 'Directory-Pass-2');
    await page.click('button[type=submit]');
    await page.waitForSelector('text=Back at the app');
    await page.close();
  });
});
