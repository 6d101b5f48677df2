import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from './helpers/api.js';
import { Agent, createHuman, createWebApp, exchangeCode, formOf, signIn, submit, uniqueName, type Step, type WebApp } from './helpers/oidc.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { startUpstreamIdp, throughUpstream, type UpstreamIdp } from './helpers/upstream-idp.js';
import { RUN_LDAP, startLdapServer, type LdapServer } from './helpers/ldap-server.js';

/**
 * Sign-in with identity providers (issue 26): an upstream OpenID provider started here
 * (oidc-provider) and a second Sesame; ZITADEL's IdP template and login-policy APIs; the login's
 * round trip (state, nonce, PKCE), an account linked to a person, created from the provider,
 * linked by a verified email only, or linked by the person after signing in to theirs; a removed
 * provider or one taken off the policy signs nobody in; `externalLoginCheckLifetime`.
 */
const CALLBACK = '/ui/login/login/externalidp/callback';
const REDIRECT = 'http://localhost:9999/callback';
let server: InProcessServer;
let upstream: UpstreamIdp;
let web: WebApp;
const clock = new TestClock();

const call = (method: string, path: string, body?: unknown, orgId?: string) => api(server, method, path, { token: server.pat, body, orgId });
const authorizeUrl = (params: Record<string, string> = {}) =>
  `/oauth/v2/authorize?${new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid email profile', state: 's', ...params })}`;
const errorText = (html: string | undefined) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(html ?? '')?.[1];

/** The instance's login policy with these changes (its other fields as they are). */
async function setInstanceLoginPolicy(changes: Record<string, unknown>): Promise<void> {
  const current = await call('GET', '/admin/v1/policies/login');
  const res = await call('PUT', '/admin/v1/policies/login', { ...current.body.policy, ...changes });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

async function addProvider(options: Record<string, unknown> = {}, upstreamIdp = upstream): Promise<string> {
  const res = await call('POST', '/admin/v1/idps/generic_oidc', {
    name: uniqueName('Upstream'),
    issuer: upstreamIdp.issuer,
    clientId: upstreamIdp.clientId,
    clientSecret: upstreamIdp.clientSecret,
    scopes: ['openid', 'profile', 'email'],
    usePkce: true,
    providerOptions: { isLinkingAllowed: true, isCreationAllowed: true, ...options },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const offered = await call('POST', '/admin/v1/policies/login/idps', { idpId: res.body.id, ownerType: 'IDP_OWNER_TYPE_SYSTEM' });
  expect(offered.status, JSON.stringify(offered.body)).toBe(200);
  return res.body.id as string;
}

/** From the login name page to the provider and back: Sesame's next page (or the app's redirect). */
async function signInAt(idpId: string, agent = new Agent(server), params: Record<string, string> = {}): Promise<{ page: Step; agent: Agent }> {
  const first = await agent.follow(authorizeUrl(params));
  const form = [...(first.html ?? '').matchAll(/<form method="post" action="\/ui\/login\/idp">([\s\S]*?)<\/form>/g)].find((f) => f[1]!.includes(`value="${idpId}"`));
  if (!form) throw new Error(`no button for ${idpId}:\n${first.html?.slice(0, 3000)}`);
  const fields = Object.fromEntries([...form[1]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]));
  const leaving = await agent.follow('/ui/login/idp', { form: fields });
  return { page: await throughUpstream(agent, server, leaving, new Agent({ url: upstream.issuer, issuer: upstream.issuer, pat: '' })), agent };
}

beforeAll(async () => {
  server = await startInProcess({ clock });
  upstream = await startUpstreamIdp(`${server.issuer}${CALLBACK}`, { pkceRequired: true });
  web = await createWebApp(server);
  await setInstanceLoginPolicy({ allowExternalIdp: true });
});

afterAll(async () => {
  await server?.close();
  await upstream?.close();
});

describe('identity provider templates (ZITADEL admin and management API)', () => {
  it('adds, shows (never the secret), updates, lists and removes a generic OIDC provider', async () => {
    const added = await call('POST', '/admin/v1/idps/generic_oidc', {
      name: 'Corp SSO',
      issuer: 'https://sso.example.com',
      clientId: 'sesame',
      clientSecret: 'top-secret-value',
      scopes: ['openid', 'email'],
      providerOptions: { isLinkingAllowed: true, autoLinking: 'AUTO_LINKING_OPTION_EMAIL' },
      usePkce: true,
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    const id = added.body.id as string;
    const shown = await call('GET', `/admin/v1/idps/templates/${id}`);
    expect(shown.status).toBe(200);
    expect(shown.body.idp).toMatchObject({
      id,
      name: 'Corp SSO',
      owner: 'IDP_OWNER_TYPE_SYSTEM',
      type: 'PROVIDER_TYPE_OIDC',
      state: 'IDP_STATE_ACTIVE',
      config: {
        options: { isLinkingAllowed: true, autoLinking: 'AUTO_LINKING_OPTION_EMAIL' },
        oidc: { issuer: 'https://sso.example.com', clientId: 'sesame', scopes: ['openid', 'email'], usePkce: true },
      },
    });
    expect(JSON.stringify(shown.body)).not.toContain('top-secret-value');
    // An update without a secret keeps it; another type's path does not find it.
    const updated = await call('PUT', `/admin/v1/idps/generic_oidc/${id}`, { name: 'Corp SSO 2', issuer: 'https://sso.example.com', clientId: 'sesame', scopes: ['openid'] });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect((await call('PUT', `/admin/v1/idps/github/${id}`, { clientId: 'x' })).status).toBe(404);
    // Aimed elsewhere, the stored secret does not follow: it must be given again.
    const elsewhere = { name: 'Corp SSO 2', issuer: 'https://attacker.example.net', clientId: 'sesame', scopes: ['openid'] };
    const refused = await call('PUT', `/admin/v1/idps/generic_oidc/${id}`, elsewhere);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain('clientSecret');
    expect((await call('GET', `/admin/v1/idps/templates/${id}`)).body.idp.config.oidc.issuer).toBe('https://sso.example.com');
    const listed = await call('POST', '/admin/v1/idps/templates/_search', {});
    expect(listed.body.result.map((p: { id: string; name: string }) => [p.id, p.name])).toContainEqual([id, 'Corp SSO 2']);
    expect((await call('DELETE', `/admin/v1/idps/${id}`)).status).toBe(200);
    expect((await call('GET', `/admin/v1/idps/templates/${id}`)).status).toBe(404);
  });

  it('refuses what Sesame cannot enforce, naming it', async () => {
    const base = { name: 'x', issuer: 'https://sso.example.com', clientId: 'c', clientSecret: 's' };
    for (const path of ['jwt', 'saml', 'apple']) {
      const res = await call('POST', `/admin/v1/idps/${path}`, {});
      expect(res.status, path).toBe(400);
      expect(res.body.message).toContain('not supported');
    }
    const byName = await call('POST', '/admin/v1/idps/generic_oidc', { ...base, providerOptions: { autoLinking: 'AUTO_LINKING_OPTION_USERNAME' } });
    expect(byName.status).toBe(400);
    expect(byName.body.message).toContain('AUTO_LINKING_OPTION_USERNAME');
    // The legacy AddOIDCIDP: its mappings are kept, a styling Sesame does not draw is refused.
    const legacy = await call('POST', '/admin/v1/idps/oidc', { ...base, usernameMapping: 'OIDC_MAPPING_FIELD_EMAIL', stylingType: 'STYLING_TYPE_GOOGLE' });
    expect(legacy.status).toBe(400);
    expect(legacy.body.message).toContain('stylingType');
    const plainHttp = await call('POST', '/admin/v1/idps/generic_oidc', { ...base, issuer: 'http://sso.example.com' });
    expect(plainHttp.status).toBe(400);
    expect(plainHttp.body.message).toContain('https');
    // An LDAP timeout Sesame would not keep is refused, not changed.
    const ldap = {
      name: 'Directory',
      servers: ['ldaps://ldap.example.com'],
      baseDn: 'dc=example,dc=com',
      bindDn: 'cn=admin,dc=example,dc=com',
      bindPassword: 'p',
      userBase: 'dn',
      userObjectClasses: ['inetOrgPerson'],
      userFilters: ['uid'],
      attributes: { idAttribute: 'uid' },
    };
    for (const timeout of ['0.5s', '120s']) {
      const res = await call('POST', '/admin/v1/idps/ldap', { ...ldap, timeout });
      expect(res.status, timeout).toBe(400);
      expect(res.body.message).toContain('timeout');
    }
    const unknownIdp = await call('POST', '/admin/v1/policies/login/idps', { idpId: '404404', ownerType: 'IDP_OWNER_TYPE_SYSTEM' });
    expect(unknownIdp.status).toBe(404);
  });

  it('presets: Microsoft with its tenant, GitHub with its endpoints', async () => {
    // Addresses count as verified only for a single tenant: on the multi-tenant endpoints any tenant sets them (nOAuth).
    const multi = await call('POST', '/admin/v1/idps/azure', { name: 'Entra', clientId: 'c', clientSecret: 's', tenant: { tenantType: 'AZURE_AD_TENANT_TYPE_ORGANISATIONS' }, emailVerified: true });
    expect(multi.status).toBe(400);
    expect(multi.body.message).toContain('single tenant');
    const both = await call('POST', '/admin/v1/idps/azure', {
      name: 'Entra',
      clientId: 'c',
      clientSecret: 's',
      tenant: { tenantType: 'AZURE_AD_TENANT_TYPE_COMMON', tenantId: 'contoso.onmicrosoft.com' },
    });
    expect(both.status).toBe(400);
    expect(both.body.message).toContain('not both');
    const azure = await call('POST', '/admin/v1/idps/azure', { name: 'Entra', clientId: 'c', clientSecret: 's', tenant: { tenantId: 'Contoso.onmicrosoft.com' }, emailVerified: true });
    expect(azure.status, JSON.stringify(azure.body)).toBe(200);
    const shown = await call('GET', `/admin/v1/idps/templates/${azure.body.id}`);
    expect(shown.body.idp).toMatchObject({ type: 'PROVIDER_TYPE_AZURE_AD', config: { azureAd: { clientId: 'c', tenant: { tenantId: 'contoso.onmicrosoft.com' }, emailVerified: true } } });
    const github = await call('POST', '/admin/v1/idps/github', { clientId: 'gh', clientSecret: 's' });
    expect(github.status).toBe(200);
    expect((await call('GET', `/admin/v1/idps/templates/${github.body.id}`)).body.idp).toMatchObject({ name: 'GitHub', type: 'PROVIDER_TYPE_GITHUB', config: { github: { clientId: 'gh' } } });
    await call('DELETE', `/admin/v1/idps/${azure.body.id}`);
    await call('DELETE', `/admin/v1/idps/${github.body.id}`);
  });
});

describe('signing in with an identity provider', () => {
  it('creates a person from an account linked to nobody (the person chooses), then signs them in with it', async () => {
    const idpId = await addProvider();
    const accountId = uniqueName('acct');
    upstream.as(accountId, { email: `${accountId}@corp.example`, email_verified: true, given_name: 'Uma', family_name: 'Stream', preferred_username: accountId });
    const { page, agent } = await signInAt(idpId);
    // The round trip carried state, nonce and PKCE S256.
    const sent = upstream.requests.at(-1)!;
    expect(sent.get('code_challenge_method')).toBe('S256');
    expect(sent.get('nonce')).toBeTruthy();
    expect(sent.get('state')).toBeTruthy();
    expect(page.html).toContain('action="/ui/login/external/register"');
    expect(page.html).toContain(`${accountId}@corp.example`);
    const done = await submit(agent, page, '/ui/login/external/register', { firstName: 'Uma', lastName: 'Stream', userName: accountId });
    expect(done.location, done.html?.slice(0, 2000)).toMatch(/^http:\/\/localhost:9999\/callback\?code=/);
    const tokens = await exchangeCode(server, web, done.location!);
    expect(tokens.status).toBe(200);
    // A sign-in at a provider is a factor without an amr value of its own (ZITADEL's).
    expect(tokens.claims.amr).toBeUndefined();
    const userId = tokens.claims.sub as string;
    const user = await call('GET', `/management/v1/users/${userId}`);
    expect(user.body.user).toMatchObject({
      userName: accountId,
      state: 'USER_STATE_ACTIVE',
      human: { profile: { firstName: 'Uma', lastName: 'Stream' }, email: { email: `${accountId}@corp.example`, isEmailVerified: true } },
    });
    const links = await call('POST', `/v2/users/${userId}/links/_search`, {});
    expect(links.body.result).toEqual([expect.objectContaining({ idpId, providedUserId: accountId, userId })]);
    // A new browser: the account signs the person in at once.
    const again = await signInAt(idpId);
    expect(again.page.location).toMatch(/^http:\/\/localhost:9999\/callback\?code=/);
    expect((await exchangeCode(server, web, again.page.location!)).claims.sub).toBe(userId);
  });

  it('creates the person without asking with isAutoCreation', async () => {
    const idpId = await addProvider({ isAutoCreation: true });
    const accountId = uniqueName('auto');
    upstream.as(accountId, { email: `${accountId}@corp.example`, email_verified: false, name: 'Ada Auto', preferred_username: accountId });
    const { page } = await signInAt(idpId);
    expect(page.location, page.html?.slice(0, 2000)).toMatch(/^http:\/\/localhost:9999\/callback\?code=/);
    const { claims } = await exchangeCode(server, web, page.location!);
    const user = await call('GET', `/management/v1/users/${claims.sub}`);
    // The provider did not verify the address: neither does Sesame.
    expect(user.body.user.human).toMatchObject({ profile: { firstName: 'Ada', lastName: 'Auto' }, email: { email: `${accountId}@corp.example` } });
    expect(user.body.user.human.email.isEmailVerified).toBeFalsy();
  });

  it('links by email only when both sides verified it', async () => {
    const idpId = await addProvider({ autoLinking: 'AUTO_LINKING_OPTION_EMAIL', isCreationAllowed: false });
    const person = await createHuman(server);
    const email = `${person.userName}@example.com`;
    // The provider does not vouch for the address: no link, the person is asked.
    upstream.as(uniqueName('unverified'), { email, email_verified: false });
    const refused = await signInAt(idpId);
    expect(refused.page.html).toContain('action="/ui/login/external/link"');
    expect(refused.page.html).not.toContain('action="/ui/login/external/register"');
    expect((await call('POST', `/v2/users/${person.userId}/links/_search`, {})).body.result ?? []).toEqual([]);
    // It does: linked, and signed in as that person.
    const accountId = uniqueName('verified');
    upstream.as(accountId, { email, email_verified: true });
    const linked = await signInAt(idpId);
    expect(linked.page.location, linked.page.html?.slice(0, 2000)).toMatch(/code=/);
    expect((await exchangeCode(server, web, linked.page.location!)).claims.sub).toBe(person.userId);
    expect((await call('POST', `/v2/users/${person.userId}/links/_search`, {})).body.result).toEqual([expect.objectContaining({ idpId, providedUserId: accountId })]);
  });

  it('links an account to the one the person signs in to, once that sign-in passed', async () => {
    const idpId = await addProvider({ isCreationAllowed: false });
    const person = await createHuman(server);
    const accountId = uniqueName('chosen');
    upstream.as(accountId, { email: 'someone@else.example', email_verified: true });
    const { page, agent } = await signInAt(idpId);
    const toLogin = await submit(agent, page, '/ui/login/external/link', {});
    expect(toLogin.html).toContain('action="/ui/login/loginname"');
    const password = await submit(agent, toLogin, '/ui/login/loginname', { loginName: person.loginName });
    // A wrong password links nothing.
    const wrong = await submit(agent, password, '/ui/login/password', { password: 'not-the-password' });
    expect(errorText(wrong.html)).toBeTruthy();
    expect((await call('POST', `/v2/users/${person.userId}/links/_search`, {})).body.result ?? []).toEqual([]);
    const done = await submit(agent, wrong, '/ui/login/password', { password: person.password });
    expect(done.location).toMatch(/code=/);
    expect((await call('POST', `/v2/users/${person.userId}/links/_search`, {})).body.result).toEqual([expect.objectContaining({ idpId, providedUserId: accountId })]);
    // From now on the account signs the person in.
    const next = await signInAt(idpId);
    expect((await exchangeCode(server, web, next.page.location!)).claims.sub).toBe(person.userId);
  });

  it('a removed provider, or one taken off the policy, signs nobody in, and its sessions and their tokens end', async () => {
    const idpId = await addProvider({ isAutoCreation: true });
    upstream.as(uniqueName('gone'), { email_verified: false, name: 'Gone Soon' });
    const { page, agent } = await signInAt(idpId);
    expect(page.location).toMatch(/code=/);
    const tokens = await exchangeCode(server, web, page.location!);
    const userinfo = () => fetch(`${server.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect((await userinfo()).status).toBe(200);
    // Taken off the instance's login policy: the button goes, a forged POST is refused, the session asks again.
    expect((await call('DELETE', `/admin/v1/policies/login/idps/${idpId}`)).status).toBe(200);
    const login = await agent.follow(authorizeUrl());
    expect(login.location).toBeUndefined();
    expect(login.html).toContain('action="/ui/login/password"');
    expect(login.html).not.toContain(`value="${idpId}"`);
    const forged = await agent.follow('/ui/login/idp', { form: { ...formOf(login.html!, '/ui/login/password').fields, idpId } });
    expect(errorText(forged.html)).toContain('not offered');
    // Removed: its links go with it.
    await call('POST', '/admin/v1/policies/login/idps', { idpId, ownerType: 'IDP_OWNER_TYPE_SYSTEM' });
    expect((await call('DELETE', `/admin/v1/idps/${idpId}`)).status).toBe(200);
    expect((await call('POST', '/admin/v1/policies/login/idps/_search', {})).body.result?.map((r: { idpId: string }) => r.idpId) ?? []).not.toContain(idpId);
    expect((await call('POST', `/v2/users/${tokens.claims.sub}/links/_search`, {})).body.result ?? []).toEqual([]);
    // The session it began ends, and the tokens issued in it with it.
    expect((await userinfo()).status).toBe(401);
  });

  it('a session of a provider sign-in lasts externalLoginCheckLifetime', async () => {
    const idpId = await addProvider({ isAutoCreation: true });
    upstream.as(uniqueName('life'), { name: 'Life Time' });
    const { page, agent } = await signInAt(idpId);
    expect(page.location).toMatch(/code=/);
    await setInstanceLoginPolicy({ externalLoginCheckLifetime: '3600s' });
    try {
      // Within the lifetime the session answers at once.
      const sso = await agent.follow(authorizeUrl());
      expect(sso.location).toMatch(/code=/);
      clock.advance(3_601_000);
      const expired = await agent.follow(authorizeUrl());
      expect(expired.location).toBeUndefined();
      expect(expired.html).toContain(`value="${idpId}"`);
    } finally {
      await setInstanceLoginPolicy({ externalLoginCheckLifetime: '864000s' });
    }
  });

  it('refuses a callback that does not match the round trip (state), and one replayed', async () => {
    const idpId = await addProvider({ isAutoCreation: true });
    upstream.as(uniqueName('replay'), { name: 'Re Play' });
    const agent = new Agent(server);
    const first = await agent.follow(authorizeUrl());
    const fields = formOf(first.html!, '/ui/login/loginname').fields;
    const leaving = await agent.follow('/ui/login/idp', { form: { ...fields, idpId } });
    const state = new URL(leaving.location!).searchParams.get('state')!;
    const forged = await agent.follow(`${CALLBACK}?code=abc&state=${encodeURIComponent(state.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')))}`);
    expect(forged.status).toBe(400);
    // The forged callback used the round trip up: the real one is refused too (single use).
    const upstreamAgent = new Agent({ url: upstream.issuer, issuer: upstream.issuer, pat: '' });
    const back = await throughUpstream(agent, server, leaving, upstreamAgent);
    expect(back.status).toBe(400);
  });
});

describe.skipIf(!RUN_LDAP)('signing in with an LDAP directory (slapd)', () => {
  let ldap: LdapServer;
  let idpId: string;
  beforeAll(async () => {
    ldap = await startLdapServer();
    await ldap.addPerson({ uid: 'lena', password: 'Directory-Pass-1', givenName: 'Lena', sn: 'Dap', mail: 'lena@ldap.example' });
    const res = await call('POST', '/admin/v1/idps/ldap', {
      name: 'Corporate directory',
      servers: [ldap.url],
      baseDn: ldap.baseDn,
      bindDn: ldap.adminDn,
      bindPassword: ldap.adminPassword,
      userBase: 'dn',
      userObjectClasses: ['inetOrgPerson'],
      userFilters: ['uid', 'mail'],
      timeout: '5s',
      attributes: { idAttribute: 'uid', firstNameAttribute: 'givenName', lastNameAttribute: 'sn', emailAttribute: 'mail', preferredUsernameAttribute: 'uid' },
      providerOptions: { isCreationAllowed: true, isAutoCreation: true },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    idpId = res.body.id;
    expect(JSON.stringify((await call('GET', `/admin/v1/idps/templates/${idpId}`)).body)).not.toContain(ldap.adminPassword);
    expect((await call('POST', '/admin/v1/policies/login/idps', { idpId, ownerType: 'IDP_OWNER_TYPE_SYSTEM' })).status).toBe(200);
  });
  afterAll(async () => {
    await ldap?.close();
  });

  async function ldapForm(agent: Agent): Promise<Step> {
    const first = await agent.follow(authorizeUrl());
    const form = [...(first.html ?? '').matchAll(/<form method="post" action="\/ui\/login\/idp">([\s\S]*?)<\/form>/g)].find((f) => f[1]!.includes(`value="${idpId}"`));
    const fields = Object.fromEntries([...form![1]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]));
    return agent.follow('/ui/login/idp', { form: fields });
  }

  it('asks the directory: a wrong password, a name that is filter syntax, then the right password makes and links the person', async () => {
    const agent = new Agent(server);
    const form = await ldapForm(agent);
    expect(form.html).toContain('action="/ui/login/ldap"');
    const wrong = await submit(agent, form, '/ui/login/ldap', { username: 'lena', password: 'wrong' });
    expect(errorText(wrong.html)).toBeTruthy();
    const wildcard = await submit(agent, wrong, '/ui/login/ldap', { username: '*', password: 'Directory-Pass-1' });
    expect(errorText(wildcard.html)).toBeTruthy();
    const injected = await submit(agent, wildcard, '/ui/login/ldap', { username: 'lena)(uid=*', password: 'Directory-Pass-1' });
    expect(errorText(injected.html)).toBeTruthy();
    const done = await submit(agent, injected, '/ui/login/ldap', { username: 'lena@ldap.example', password: 'Directory-Pass-1' });
    if (!done.location) throw new Error(`no redirect: ${done.status} ${errorText(done.html)} ${done.html?.slice(0, 300)}\n${server.logs().slice(-1500)}`);
    expect(done.location).toMatch(/code=/);
    const { claims } = await exchangeCode(server, web, done.location!);
    const user = await call('GET', `/management/v1/users/${claims.sub}`);
    expect(user.body.user).toMatchObject({ userName: 'lena', human: { profile: { firstName: 'Lena', lastName: 'Dap' }, email: { email: 'lena@ldap.example' } } });
    const links = await call('POST', `/management/v1/users/${claims.sub}/idps/_search`, {});
    expect(links.body.result).toEqual([expect.objectContaining({ idpId, providedUserId: 'lena', idpName: 'Corporate directory' })]);
    // The directory's password signs the same person in again.
    const again = await submit(new Agent(server), await ldapForm(new Agent(server)), '/ui/login/ldap', { username: 'lena', password: 'Directory-Pass-1' });
    expect(again.status).toBeLessThan(500);
  });

  it('an unreachable directory is told, not a crash', async () => {
    const down = await call('POST', '/admin/v1/idps/ldap', {
      name: 'Down directory',
      servers: ['ldap://127.0.0.1:1'],
      baseDn: ldap.baseDn,
      bindDn: ldap.adminDn,
      bindPassword: 'x',
      userBase: 'dn',
      userObjectClasses: ['inetOrgPerson'],
      userFilters: ['uid'],
      timeout: '1s',
      attributes: { idAttribute: 'uid' },
    });
    expect(down.status, JSON.stringify(down.body)).toBe(200);
    await call('POST', '/admin/v1/policies/login/idps', { idpId: down.body.id, ownerType: 'IDP_OWNER_TYPE_SYSTEM' });
    const agent = new Agent(server);
    const first = await agent.follow(authorizeUrl());
    const leaving = await agent.follow('/ui/login/idp', { form: { ...formOf(first.html!, '/ui/login/loginname').fields, idpId: down.body.id } });
    const page = await submit(agent, leaving, '/ui/login/ldap', { username: 'lena', password: 'Directory-Pass-1' });
    expect(page.status).toBe(200);
    expect(errorText(page.html)).toContain('could not be reached');
    await call('DELETE', `/admin/v1/idps/${down.body.id}`);
  });
});

describe('a second Sesame as the upstream provider', () => {
  let upstreamSesame: InProcessServer;
  beforeAll(async () => {
    // The same clock: in-process servers share the process's (this test advanced it).
    upstreamSesame = await startInProcess({ clock });
  });
  afterAll(async () => {
    await upstreamSesame?.close();
  });

  it('signs in at the other Sesame (its own login, PKCE, its ID token checked) and creates the person here', async () => {
    const app = await createWebApp(upstreamSesame, { redirectUris: [`${server.issuer}${CALLBACK}`] });
    const person = await createHuman(upstreamSesame, { firstName: 'Otto' });
    const idpId = await addProvider({ isAutoCreation: true }, { issuer: upstreamSesame.issuer, clientId: app.clientId, clientSecret: app.clientSecret } as UpstreamIdp);
    const agent = new Agent(server);
    const first = await agent.follow(authorizeUrl());
    const leaving = await agent.follow('/ui/login/idp', { form: { ...formOf(first.html!, '/ui/login/loginname').fields, idpId } });
    expect(leaving.location).toContain(`${upstreamSesame.issuer}/oauth/v2/authorize?`);
    expect(new URL(leaving.location!).searchParams.get('code_challenge_method')).toBe('S256');
    // The other Sesame's login, in its own browser context (its cookie is its own).
    const there = new Agent(upstreamSesame);
    const url = new URL(leaving.location!);
    const back = await signIn(there, url.pathname + url.search, person);
    expect(back.location).toContain(`${server.issuer}${CALLBACK}?`);
    const callback = new URL(back.location!);
    const done = await agent.follow(callback.pathname + callback.search);
    expect(done.location, done.html?.slice(0, 2000)).toMatch(/code=/);
    const { claims } = await exchangeCode(server, web, done.location!);
    const user = await call('GET', `/management/v1/users/${claims.sub}`);
    expect(user.body.user.human.profile.firstName).toBe('Otto');
    // The link's key is the other Sesame's subject: the person's id there.
    expect((await call('POST', `/v2/users/${claims.sub}/links/_search`, {})).body.result).toEqual([expect.objectContaining({ idpId, providedUserId: person.userId })]);
  });
});

describe('identity providers and links in a bundle', () => {
  it("imports ZITADEL oidcIdps, Sesame providers, userLinks and a person's idps (ids mapped), exports them, and imports them again elsewhere", async () => {
    // An instance provider of the target: what ZITADEL's instance-level provider of the bundle is mapped to.
    const target = await call('POST', '/admin/v1/idps/github', { clientId: 'gh', clientSecret: 's', name: uniqueName('Instance GitHub') });
    const orgId = `fed${Date.now()}`;
    const userId = `${orgId}-u`;
    const org = {
      orgId,
      org: { name: uniqueName('federated') },
      oidcIdps: [
        { idpId: `${orgId}-oidc`, idp: { name: 'Corp SSO', clientId: 'corp', clientSecret: 'corp-secret', issuer: 'https://sso.example.com', scopes: ['openid', 'email'], autoRegister: true } },
      ],
      sesameIdps: [
        {
          idpId: `${orgId}-oauth`,
          idp: {
            name: 'Wiki',
            type: 'PROVIDER_TYPE_OAUTH',
            config: {
              options: { isLinkingAllowed: true },
              oauth: {
                clientId: 'w',
                authorizationEndpoint: 'https://wiki.example/authorize',
                tokenEndpoint: 'https://wiki.example/token',
                userEndpoint: 'https://wiki.example/me',
                idAttribute: 'uid',
              },
            },
          },
        },
      ],
      loginPolicy: {
        allowUsernamePassword: true,
        allowExternalIdp: true,
        idps: [
          { idpId: `${orgId}-oidc`, ownerType: 'IDP_OWNER_TYPE_ORG' },
          { idpId: 'zitadel-instance-idp', ownerType: 'IDP_OWNER_TYPE_SYSTEM' },
          { idpId: 'unknown-idp', ownerType: 'IDP_OWNER_TYPE_ORG' },
        ],
      },
      humanUsers: [
        {
          userId,
          user: {
            userName: 'fed',
            profile: { firstName: 'Fe', lastName: 'Derated' },
            email: { email: 'fed@example.com', isEmailVerified: true },
            idps: [{ configId: `${orgId}-oauth`, externalUserId: 'wiki-7', displayName: 'fed.wiki' }],
          },
          state: 'USER_STATE_ACTIVE',
        },
      ],
      userLinks: [
        { userId, idpId: `${orgId}-oidc`, providedUserId: 'corp-sub-1', providedUserName: 'fed@corp' },
        { userId, idpId: 'zitadel-instance-idp', providedUserId: '4242', providedUserName: 'fed-gh' },
        { userId, idpId: 'unknown-idp', providedUserId: 'u', providedUserName: 'u' },
      ],
    };
    const imported = await call('POST', '/admin/v1/import', { timeout: '1m', idpIdMap: { 'zitadel-instance-idp': target.body.id }, dataOrgs: { orgs: [org] } });
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    const success = imported.body.success.orgs[0];
    expect(success.oidcIpds.sort()).toEqual([`${orgId}-oauth`, `${orgId}-oidc`]);
    expect(success.userLinks).toHaveLength(3);
    const errors = (imported.body.errors ?? []) as { type: string; id: string; message: string }[];
    expect(errors.map((e) => e.type).sort()).toEqual(['login_policy', 'user_link']);
    expect(errors.every((e) => e.message.includes('unknown-idp'))).toBe(true);
    // The providers are the org's, the policy offers the org's and the mapped instance one.
    const templates = await call('POST', '/management/v1/idps/templates/_search', {}, orgId);
    expect(
      templates.body.result
        .filter((p: { owner: string }) => p.owner === 'IDP_OWNER_TYPE_ORG')
        .map((p: { id: string; type: string }) => [p.id, p.type])
        .sort(),
    ).toEqual([
      [`${orgId}-oauth`, 'PROVIDER_TYPE_OAUTH'],
      [`${orgId}-oidc`, 'PROVIDER_TYPE_OIDC'],
    ]);
    const offered = await call('POST', '/management/v1/policies/login/idps/_search', {}, orgId);
    expect(offered.body.result.map((r: { idpId: string }) => r.idpId).sort()).toEqual([`${orgId}-oidc`, target.body.id].sort());
    const links = await call('POST', `/management/v1/users/${userId}/idps/_search`, {}, orgId);
    expect(links.body.result.map((l: { idpId: string; providedUserId: string }) => `${l.idpId}:${l.providedUserId}`).sort()).toEqual(
      [`${orgId}-oauth:wiki-7`, `${orgId}-oidc:corp-sub-1`, `${target.body.id}:4242`].sort(),
    );

    const exported = await call('POST', '/admin/v1/export', { orgIds: [orgId], responseOutput: true, timeout: '1m' });
    expect(exported.status).toBe(200);
    const out = exported.body.orgs[0];
    expect(out.oidcIdps).toEqual([{ idpId: `${orgId}-oidc`, idp: { name: 'Corp SSO', clientId: 'corp', issuer: 'https://sso.example.com', scopes: ['openid', 'email'], autoRegister: true } }]);
    expect(out.sesameIdps.map((p: { idpId: string }) => p.idpId).sort()).toEqual([`${orgId}-oauth`, `${orgId}-oidc`]);
    expect(JSON.stringify(out)).not.toContain('corp-secret');
    expect(out.userLinks).toHaveLength(3);
    expect(out.loginPolicy.idps).toHaveLength(2);

    // Into another Sesame, whose GitHub provider has another id.
    const other = await startInProcess({ clock });
    try {
      const otherGithub = await api(other, 'POST', '/admin/v1/idps/github', { token: other.pat, body: { clientId: 'gh', clientSecret: 's' } });
      const again = await api(other, 'POST', '/admin/v1/import', { token: other.pat, body: { timeout: '1m', idpIdMap: { [target.body.id]: otherGithub.body.id }, dataOrgs: exported.body } });
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(again.body.errors ?? []).toEqual([]);
      const otherLinks = await api(other, 'POST', `/management/v1/users/${userId}/idps/_search`, { token: other.pat, orgId, body: {} });
      expect(otherLinks.body.result.map((l: { idpId: string }) => l.idpId).sort()).toEqual([`${orgId}-oauth`, `${orgId}-oidc`, otherGithub.body.id].sort());
      const otherTemplate = await api(other, 'GET', `/management/v1/idps/templates/${orgId}-oauth`, { token: other.pat, orgId });
      expect(otherTemplate.body.idp.config.oauth).toMatchObject({ userEndpoint: 'https://wiki.example/me', idAttribute: 'uid' });
    } finally {
      await other.close();
    }
  });
});

describe("an org's own providers", () => {
  it("an org owner adds one and offers it on the org's login; its links need the right to act on the person; it signs in the org's people only", async () => {
    const orgId = `idporg${Date.now()}`;
    const imported = await call('POST', '/admin/v1/import', {
      timeout: '1m',
      dataOrgs: {
        orgs: [
          {
            orgId,
            org: { name: uniqueName('idp-org') },
            machineUsers: [
              { userId: `${orgId}-owner`, user: { userName: 'owner', name: 'Owner' } },
              { userId: `${orgId}-manager`, user: { userName: 'manager', name: 'Manager' } },
            ],
            humanUsers: [
              {
                userId: `${orgId}-p`,
                user: { userName: 'pia', profile: { firstName: 'Pia', lastName: 'Org' }, email: { email: 'pia@example.com', isEmailVerified: true }, password: 'Pia-Password-1' },
              },
            ],
            orgMembers: [
              { userId: `${orgId}-owner`, roles: ['ORG_OWNER'] },
              { userId: `${orgId}-manager`, roles: ['ORG_USER_MANAGER'] },
            ],
          },
        ],
      },
    });
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    const patOf = async (userId: string) => (await call('POST', `/management/v1/users/${userId}/pats`, {}, orgId)).body.token as string;
    const owner = await patOf(`${orgId}-owner`);
    const manager = await patOf(`${orgId}-manager`);
    const as = (token: string, method: string, path: string, body?: unknown) => api(server, method, path, { token, body, orgId });
    const provider = { name: 'Org SSO', issuer: upstream.issuer, clientId: upstream.clientId, clientSecret: upstream.clientSecret, usePkce: true, providerOptions: { isLinkingAllowed: true } };
    // A user manager may not decide who signs in to the org.
    expect((await as(manager, 'POST', '/management/v1/idps/generic_oidc', provider)).status).toBe(403);
    // An org owner's provider is reached at public https addresses only (the upstream here is on this machine).
    const internal = await as(owner, 'POST', '/management/v1/idps/generic_oidc', provider);
    expect(internal.status).toBe(400);
    expect(internal.body.message).toContain('https');
    expect((await as(owner, 'POST', '/management/v1/idps/generic_oidc', { ...provider, name: 'Intranet', issuer: 'https://10.1.2.3' })).body.message).toContain('public address');
    // So is an org's LDAP directory.
    const ldapBody = {
      name: 'Org LDAP',
      servers: ['ldaps://10.1.2.4'],
      baseDn: 'dc=org',
      bindDn: 'cn=admin,dc=org',
      bindPassword: 'p',
      userBase: 'dn',
      userObjectClasses: ['inetOrgPerson'],
      userFilters: ['uid'],
      attributes: { idAttribute: 'uid' },
    };
    const internalLdap = await as(owner, 'POST', '/management/v1/idps/ldap', ldapBody);
    expect(internalLdap.status).toBe(400);
    expect(internalLdap.body.message).toContain('public address');
    // An instance administrator vouches for it (as for an app's internal logout receiver).
    const added = await call('POST', '/management/v1/idps/generic_oidc', provider, orgId);
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    const idpId = added.body.id as string;
    expect((await as(owner, 'GET', `/management/v1/idps/templates/${idpId}`)).body.idp.owner).toBe('IDP_OWNER_TYPE_ORG');
    // Another org does not see it, nor can the instance's policy offer it.
    expect((await call('GET', `/management/v1/idps/templates/${idpId}`)).status).toBe(404);
    expect((await call('POST', '/admin/v1/policies/login/idps', { idpId, ownerType: 'IDP_OWNER_TYPE_SYSTEM' })).status).toBe(404);
    const policy = await as(owner, 'POST', '/management/v1/policies/login', { allowUsernamePassword: true, allowExternalIdp: true, idps: [{ idpId, ownerType: 'IDP_OWNER_TYPE_ORG' }] });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);

    // A link: the manager may act on Pia; a person of another org cannot be linked to the org's provider.
    const accountId = uniqueName('pia-sso');
    expect((await as(manager, 'POST', `/v2/users/${orgId}-p/links`, { idpLink: { idpId, userId: accountId, userName: 'pia' } })).status).toBe(200);
    const stranger = await createHuman(server);
    expect((await call('POST', `/v2/users/${stranger.userId}/links`, { idpLink: { idpId, userId: 'x', userName: 'x' } })).status).toBe(404);
    // The same account cannot be linked twice.
    expect((await as(owner, 'POST', `/v2/users/${orgId}-p/links`, { idpLink: { idpId, userId: accountId, userName: 'again' } })).status).toBe(409);

    // The org's login (org scope) offers it and it signs Pia in.
    upstream.as(accountId, { name: 'Pia Org' });
    const { page, agent } = await signInAt(idpId, new Agent(server), { scope: `openid urn:zitadel:iam:org:id:${orgId}` });
    expect(page.location, page.html?.slice(0, 2000)).toMatch(/code=/);
    expect((await exchangeCode(server, web, page.location!)).claims.sub).toBe(`${orgId}-p`);
    // Unlinked: the account signs nobody in, and Pia's sessions end (what signed her in may have been it).
    expect((await as(owner, 'DELETE', `/management/v1/users/${orgId}-p/idps/${idpId}/${encodeURIComponent(accountId)}`)).status).toBe(200);
    expect((await as(owner, 'POST', `/management/v1/users/${orgId}-p/idps/_search`, {})).body.result ?? []).toEqual([]);
    const silent = await agent.follow(authorizeUrl({ scope: `openid urn:zitadel:iam:org:id:${orgId}`, prompt: 'none' }));
    expect(silent.location).toContain('error=login_required');
    const again = await signInAt(idpId, new Agent(server), { scope: `openid urn:zitadel:iam:org:id:${orgId}` });
    expect(again.page.html).toContain('action="/ui/login/external/link"');
  });

  it('an org owner cannot add a provider to an org where an instance administrator signs in', async () => {
    const orgId = `idpadm${Date.now()}`;
    await call('POST', '/admin/v1/import', {
      timeout: '1m',
      dataOrgs: {
        orgs: [
          {
            orgId,
            org: { name: uniqueName('idp-admin-org') },
            machineUsers: [{ userId: `${orgId}-owner`, user: { userName: 'owner', name: 'Owner' } }],
            humanUsers: [
              {
                userId: `${orgId}-iam`,
                user: { userName: 'iam', profile: { firstName: 'I', lastName: 'Am' }, email: { email: 'iam@example.com', isEmailVerified: true }, password: 'Iam-Password-12' },
              },
            ],
            orgMembers: [{ userId: `${orgId}-owner`, roles: ['ORG_OWNER'] }],
          },
        ],
      },
    });
    expect((await call('POST', '/admin/v1/members', { userId: `${orgId}-iam`, roles: ['IAM_OWNER'] })).status).toBe(200);
    const owner = (await call('POST', `/management/v1/users/${orgId}-owner/pats`, {}, orgId)).body.token as string;
    const res = await api(server, 'POST', '/management/v1/idps/generic_oidc', {
      token: owner,
      orgId,
      body: { name: 'Takeover', issuer: 'https://evil.example', clientId: 'c', clientSecret: 's', providerOptions: { autoLinking: 'AUTO_LINKING_OPTION_EMAIL' } },
    });
    expect(res.status).toBe(403);
  });
});
