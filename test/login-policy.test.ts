import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, importOrgs } from './helpers/api.js';
import { Agent, createHuman, createWebApp, exchangeCode, formOf, responseParams, signIn, submit, uniqueName, type Step, type WebApp } from './helpers/oidc.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { base32Encode, totpAt } from '../src/crypto/totp.js';

/**
 * Every login and lockout policy setting the API accepts is enforced by the login pages (or
 * refused by the API): forceMfa with TOTP enrollment, the enrollment prompt and its skip lifetime,
 * the check lifetimes, a required password change, unknown user names, lockout messages, TOTP
 * lockout, logins by email or phone; and the browser cookie is replaced at every sign-in.
 */
let server: InProcessServer;
let web: WebApp;
const REDIRECT = 'http://localhost:9999/callback';

const authorizeUrl = (app: WebApp, params: Record<string, string> = {}) =>
  `/oauth/v2/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 's', ...params })}`;
const errorText = (html: string | undefined) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(html ?? '')?.[1];
const cookieName = 'sesame.useragent';
/** The server's time: TOTP codes are computed for it, as an authenticator app with a synchronised clock would. */
const clock = new TestClock();
const now = () => Math.floor(clock.now() / 1000);

async function newOrg(): Promise<string> {
  const res = await api(server, 'POST', '/management/v1/orgs', { token: server.pat, body: { name: uniqueName('org') } });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

/** A person in a new org with this login policy. */
async function personUnder(policy: Record<string, unknown>) {
  const orgId = await newOrg();
  await setLoginPolicy(orgId, policy);
  return { orgId, person: await createHuman(server, { orgId }) };
}

async function setLoginPolicy(orgId: string, policy: Record<string, unknown>) {
  const res = await api(server, 'POST', '/management/v1/policies/login', { token: server.pat, orgId, body: { allowUsernamePassword: true, ...policy } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

async function tokensFor(location: string) {
  const tokens = await exchangeCode(server, web, location, REDIRECT);
  expect(tokens.status).toBe(200);
  return tokens.claims;
}

async function toPassword(agent: Agent, loginName: string, params: Record<string, string> = {}): Promise<Step> {
  const first = await agent.follow(authorizeUrl(web, params));
  return submit(agent, first, '/ui/login/loginname', { loginName });
}

const shownSecret = (html: string) => /<code class="secret">(.*?)<\/code>/.exec(html)![1]!.replace(/<\/?span>| /g, '');

beforeAll(async () => {
  server = await startInProcess({ clock });
  web = await createWebApp(server);
});

afterAll(async () => {
  await server?.close();
});

describe('forceMfa', () => {
  it('takes a person without a second factor through TOTP enrollment before the code; amr then has otp and mfa', async () => {
    const { person } = await personUnder({ forceMfa: true });
    const agent = new Agent(server);
    let page = await toPassword(agent, person.loginName);
    page = await submit(agent, page, '/ui/login/password', { password: person.password });
    // No code for the client yet: the enrollment page, with a QR code and the key as text, no skip.
    expect(page.location).toBeUndefined();
    expect(page.html).toContain('action="/ui/login/mfa/verify"');
    expect(page.html).toMatch(/<img class="qr" src="data:image\/svg\+xml;base64,[A-Za-z0-9+/=]+"/);
    expect(page.html).not.toContain('action="/ui/login/mfa/skip"');
    expect(page.html).not.toContain('<script');
    const svg = Buffer.from(/data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)/.exec(page.html!)![1]!, 'base64').toString();
    expect(svg).toMatch(/^<svg /);
    const secret = shownSecret(page.html!);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);

    // Skipping is refused when MFA is forced, even by a hand-made post.
    const skip = await agent.follow('/ui/login/mfa/skip', { form: formOf(page.html!, '/ui/login/mfa/verify').fields });
    expect(skip.location).toBeUndefined();
    expect(errorText(skip.html)).toMatch(/cannot be skipped/);
    page = await submit(agent, skip, '/ui/login/mfa/verify', { code: String((Number(totpAt(secret, now())) + 1) % 1_000_000).padStart(6, '0') });
    expect(errorText(page.html)).toMatch(/code/i);
    page = await submit(agent, page, '/ui/login/mfa/verify', { code: totpAt(secret, now()) });
    expect(page.location).toMatch(/code=/);
    expect((await tokensFor(page.location!)).amr).toEqual(['pwd', 'otp', 'mfa']);

    // The secret is now the person's second factor: the next sign-in asks for a code.
    const next = new Agent(server);
    let again = await toPassword(next, person.loginName);
    again = await submit(next, again, '/ui/login/password', { password: person.password });
    expect(again.html).toContain('action="/ui/login/otp"');
    again = await submit(next, again, '/ui/login/otp', { code: totpAt(secret, now() + 30) });
    expect((await tokensFor(again.location!)).amr).toEqual(['pwd', 'otp', 'mfa']);
  });

  it('asks an existing browser session without a second factor to enroll (and prompt=none cannot)', async () => {
    const orgId = await newOrg();
    const person = await createHuman(server, { orgId });
    const agent = new Agent(server);
    expect((await signIn(agent, authorizeUrl(web), person)).location).toMatch(/code=/);
    await setLoginPolicy(orgId, { forceMfa: true });
    const silent = await agent.follow(authorizeUrl(web, { prompt: 'none' }));
    expect(responseParams(silent.location!).get('error')).toBe('interaction_required');
    const page = await agent.follow(authorizeUrl(web));
    expect(page.html).toContain('action="/ui/login/mfa/verify"');
    const done = await submit(agent, page, '/ui/login/mfa/verify', { code: totpAt(shownSecret(page.html!), now()) });
    expect((await tokensFor(done.location!)).amr).toEqual(['pwd', 'otp', 'mfa']);
  });

  it('refuses forceMfa without TOTP among the second factors, and the factors Sesame does not have', async () => {
    const orgId = await newOrg();
    const post = (body: Record<string, unknown>) => api(server, 'POST', '/management/v1/policies/login', { token: server.pat, orgId, body });
    for (const body of [
      { forceMfa: true, secondFactors: [] },
      { secondFactors: ['SECOND_FACTOR_TYPE_OTP', 'SECOND_FACTOR_TYPE_RECOVERY_CODES'] },
      { secondFactors: ['SECOND_FACTOR_TYPE_OTP_SMS'] },
      { idps: [{ idpId: '123', ownerType: 'IDP_OWNER_TYPE_UNSPECIFIED' }] },
      { allowDomainDiscovery: true },
      { defaultRedirectUri: 'https://app.example/' },
      { passwordCheckLifetime: 'soon' },
    ]) {
      const res = await post(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.message, JSON.stringify(body)).toMatch(/not supported|passwordCheckLifetime/);
    }
    const refused = await post({ secondFactors: ['SECOND_FACTOR_TYPE_OTP_SMS'] });
    expect(refused.body.message).toContain('SECOND_FACTOR_TYPE_OTP_SMS');
    // A provider the org does not have is refused by name (test/federation.test.ts offers real ones).
    const unknown = await post({ allowExternalIdp: true, idps: [{ idpId: '123', ownerType: 'IDP_OWNER_TYPE_ORG' }] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain('identity provider 123 not found');
    // Nothing was stored by the refused calls.
    expect((await api(server, 'GET', '/management/v1/policies/login', { token: server.pat, orgId })).body.policy.isDefault).toBe(true);
  });
});

describe('TOTP enrollment offered (mfaInitSkipLifetime)', () => {
  it('offers enrollment that can be skipped; it is not offered again within the lifetime', async () => {
    const orgId = await newOrg();
    await setLoginPolicy(orgId, { mfaInitSkipLifetime: '720h' });
    const person = await createHuman(server, { orgId });
    const agent = new Agent(server);
    let page = await toPassword(agent, person.loginName);
    page = await submit(agent, page, '/ui/login/password', { password: person.password });
    expect(page.html).toContain('action="/ui/login/mfa/verify"');
    expect(page.html).toContain('action="/ui/login/mfa/skip"');
    page = await submit(agent, page, '/ui/login/mfa/skip', {});
    expect(page.location).toMatch(/code=/);
    expect((await tokensFor(page.location!)).amr).toEqual(['pwd']);
    // Skipped: the next sign-in goes straight through.
    const done = await signIn(new Agent(server), authorizeUrl(web), person);
    expect(done.location).toMatch(/code=/);
  });

  it('does not offer enrollment with a zero lifetime (the default)', async () => {
    const person = await createHuman(server);
    expect((await signIn(new Agent(server), authorizeUrl(web), person)).location).toMatch(/code=/);
    const policy = await api(server, 'GET', '/management/v1/policies/login', { token: server.pat });
    expect(policy.body.policy).toMatchObject({ mfaInitSkipLifetime: '0s', passwordCheckLifetime: '864000s', secondFactorCheckLifetime: '64800s', secondFactors: ['SECOND_FACTOR_TYPE_OTP'] });
  });
});

describe('check lifetimes', () => {
  it('passwordCheckLifetime: an older password check is asked for again, and prompt=none is refused', async () => {
    const orgId = await newOrg();
    const person = await createHuman(server, { orgId });
    const agent = new Agent(server);
    expect((await signIn(agent, authorizeUrl(web), person)).location).toMatch(/code=/);
    // Within the (default) lifetime the session answers at once.
    expect((await agent.follow(authorizeUrl(web))).location).toMatch(/code=/);
    await setLoginPolicy(orgId, { passwordCheckLifetime: '0s' });
    const silent = await agent.follow(authorizeUrl(web, { prompt: 'none' }));
    expect(responseParams(silent.location!).get('error')).toBe('login_required');
    let page = await agent.follow(authorizeUrl(web));
    expect(page.html).toContain('action="/ui/login/password"');
    page = await submit(agent, page, '/ui/login/password', { password: person.password });
    expect(page.location).toMatch(/code=/);
  });

  it('secondFactorCheckLifetime: only the TOTP code is asked for again', async () => {
    const orgId = await newOrg();
    const secret = base32Encode(Buffer.from('second-factor-life-1'));
    const person = await createHuman(server, { orgId, otpSecret: secret });
    const agent = new Agent(server);
    expect((await signIn(agent, authorizeUrl(web), person, () => totpAt(secret, now()))).location).toMatch(/code=/);
    expect((await agent.follow(authorizeUrl(web))).location).toMatch(/code=/);
    await setLoginPolicy(orgId, { secondFactorCheckLifetime: '0s' });
    let page = await agent.follow(authorizeUrl(web));
    expect(page.html).toContain('action="/ui/login/otp"');
    page = await submit(agent, page, '/ui/login/otp', { code: totpAt(secret, now() + 30) });
    expect((await tokensFor(page.location!)).amr).toEqual(['pwd', 'otp', 'mfa']);
  });
});

describe('passwordChangeRequired', () => {
  it('asks for a new password at the next sign-in; the old one stops working', async () => {
    const userName = uniqueName('change');
    const imported = await api(server, 'POST', '/management/v1/users/human/_import', {
      token: server.pat,
      body: { userName, profile: { firstName: 'C', lastName: 'D' }, email: { email: `${userName}@example.com`, isEmailVerified: true }, password: 'Initial-Pass-1', passwordChangeRequired: true },
    });
    expect(imported.status).toBe(200);
    const loginName = (await api(server, 'GET', `/management/v1/users/${imported.body.userId}`, { token: server.pat })).body.user.preferredLoginName;
    const agent = new Agent(server);
    let page = await toPassword(agent, loginName);
    page = await submit(agent, page, '/ui/login/password', { password: 'Initial-Pass-1' });
    expect(page.html).toContain('action="/ui/login/password/change"');
    page = await submit(agent, page, '/ui/login/password/change', { password: 'Brand-New-Pass-2', passwordConfirm: 'Brand-New-Pass-3' });
    expect(errorText(page.html)).toMatch(/match/);
    page = await submit(agent, page, '/ui/login/password/change', { password: 'Brand-New-Pass-2', passwordConfirm: 'Brand-New-Pass-2' });
    expect(page.location).toMatch(/code=/);
    const old = await signIn(new Agent(server), authorizeUrl(web), { loginName, password: 'Initial-Pass-1' });
    expect(errorText(old.html)).toMatch(/wrong/);
    const fresh = await signIn(new Agent(server), authorizeUrl(web), { loginName, password: 'Brand-New-Pass-2' });
    expect(fresh.location).toMatch(/code=/);
  });
});

describe('unknown user names, lockout messages and logins by email or phone', () => {
  it('ignoreUnknownUsernames=false says so at the login name step; true goes on to the password', async () => {
    const orgId = await newOrg();
    const orgScope = { scope: `openid urn:zitadel:iam:org:id:${orgId}` };
    const agent = new Agent(server);
    await setLoginPolicy(orgId, { ignoreUnknownUsernames: false });
    let page = await toPassword(agent, 'nobody-at-all', orgScope);
    expect(page.html).toContain('action="/ui/login/loginname"');
    expect(errorText(page.html)).toMatch(/could not be found/);
    await api(server, 'PUT', '/management/v1/policies/login', { token: server.pat, orgId, body: { allowUsernamePassword: true, ignoreUnknownUsernames: true } });
    page = await toPassword(new Agent(server), 'nobody-at-all', orgScope);
    expect(page.html).toContain('action="/ui/login/password"');
  });

  it('showLockoutFailure=false answers a locked account like a wrong password', async () => {
    const orgId = await newOrg();
    expect((await api(server, 'POST', '/management/v1/policies/lockout', { token: server.pat, orgId, body: { maxPasswordAttempts: '1', showLockoutFailure: false } })).status).toBe(200);
    const person = await createHuman(server, { orgId });
    const agent = new Agent(server);
    let page = await toPassword(agent, person.loginName);
    page = await submit(agent, page, '/ui/login/password', { password: 'wrong' });
    expect(errorText(page.html)).toMatch(/wrong/);
    page = await submit(agent, page, '/ui/login/password', { password: person.password });
    expect(errorText(page.html)).toMatch(/wrong/);
    expect((await api(server, 'GET', `/management/v1/users/${person.userId}`, { token: server.pat, orgId })).body.user.state).toBe('USER_STATE_LOCKED');
  });

  it('allowUsernamePassword=false is told only to whoever knows the password (otherwise like a wrong password)', async () => {
    const orgId = await newOrg();
    const person = await createHuman(server, { orgId });
    const res = await api(server, 'POST', '/management/v1/policies/login', { token: server.pat, orgId, body: { allowUsernamePassword: false, allowRegister: true } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const agent = new Agent(server);
    let page = await toPassword(agent, person.loginName);
    page = await submit(agent, page, '/ui/login/password', { password: 'wrong' });
    expect(errorText(page.html)).toMatch(/wrong/);
    page = await submit(agent, page, '/ui/login/password', { password: person.password });
    expect(errorText(page.html)).toMatch(/not allowed/);
    // Wrong passwords still count against the lockout: no unlimited guessing where passwords are disallowed.
    const user = await api(server, 'GET', `/management/v1/users/${person.userId}`, { token: server.pat, orgId });
    expect(user.status).toBe(200);
    const lockout = await api(server, 'POST', '/management/v1/policies/lockout', { token: server.pat, orgId, body: { maxPasswordAttempts: '2' } });
    expect(lockout.status).toBe(200);
    const guesser = new Agent(server);
    let guess = await toPassword(guesser, person.loginName);
    for (let i = 0; i < 2; i++) guess = await submit(guesser, guess, '/ui/login/password', { password: `wrong-${i}` });
    expect((await api(server, 'GET', `/management/v1/users/${person.userId}`, { token: server.pat, orgId })).body.user.state).toBe('USER_STATE_LOCKED');
    // Nor can a person register and be signed in by password there.
    const registering = new Agent(server);
    const start = await registering.follow(authorizeUrl(web, { scope: `openid urn:zitadel:iam:org:id:${orgId}` }));
    expect(start.html).not.toContain('action="/ui/login/register"');
  });

  it('maxOtpAttempts locks the user after that many wrong codes', async () => {
    const orgId = await newOrg();
    expect((await api(server, 'POST', '/management/v1/policies/lockout', { token: server.pat, orgId, body: { maxOtpAttempts: '2', showLockoutFailure: true } })).status).toBe(200);
    const secret = base32Encode(Buffer.from('otp-lockout-secret-1'));
    const person = await createHuman(server, { orgId, otpSecret: secret });
    const agent = new Agent(server);
    let page = await toPassword(agent, person.loginName);
    page = await submit(agent, page, '/ui/login/password', { password: person.password });
    const wrong = String((Number(totpAt(secret, now())) + 500_000) % 1_000_000).padStart(6, '0');
    page = await submit(agent, page, '/ui/login/otp', { code: wrong });
    expect(errorText(page.html)).toMatch(/code/);
    page = await submit(agent, page, '/ui/login/otp', { code: wrong });
    expect(errorText(page.html)).toMatch(/locked/);
    expect((await api(server, 'GET', `/management/v1/users/${person.userId}`, { token: server.pat, orgId })).body.user.state).toBe('USER_STATE_LOCKED');
  });

  it('accepts a verified email or phone as login name unless the policy disables it', async () => {
    const orgId = await newOrg();
    const phone = `+4179${String(Date.now()).slice(-7)}`;
    const person = await createHuman(server, { orgId, phone });
    const byEmail = await signIn(new Agent(server), authorizeUrl(web), { loginName: `${person.userName}@example.com`, password: person.password });
    expect(byEmail.location).toMatch(/code=/);
    const byPhone = await signIn(new Agent(server), authorizeUrl(web), { loginName: phone, password: person.password });
    expect(byPhone.location).toMatch(/code=/);
    await setLoginPolicy(orgId, { disableLoginWithEmail: true, disableLoginWithPhone: true });
    const refusedEmail = await signIn(new Agent(server), authorizeUrl(web), { loginName: `${person.userName}@example.com`, password: person.password });
    expect(errorText(refusedEmail.html)).toMatch(/wrong/);
    const refusedPhone = await signIn(new Agent(server), authorizeUrl(web), { loginName: phone, password: person.password });
    expect(errorText(refusedPhone.html)).toMatch(/wrong/);
  });
});

describe('session fixation', () => {
  it('replaces the browser cookie at sign-in: a value planted before opens nothing afterwards', async () => {
    const person = await createHuman(server);
    // The attacker gets a cookie value from Sesame and plants it in the victim's browser.
    const attacker = new Agent(server);
    await attacker.follow(authorizeUrl(web));
    const planted = attacker.cookies.get(cookieName)!;
    expect(planted).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const victim = new Agent(server);
    victim.cookies.set(cookieName, planted);
    const done = await signIn(victim, authorizeUrl(web), person);
    expect(done.location).toMatch(/code=/);
    expect(done.headers.get('set-cookie')).toMatch(new RegExp(`^${cookieName}=[A-Za-z0-9_-]{43}; Path=/;.*HttpOnly; SameSite=Lax`));
    expect(victim.cookies.get(cookieName)).not.toBe(planted);
    // The planted value is worth nothing now; the victim's new cookie carries the session.
    const stolen = await attacker.follow(authorizeUrl(web, { prompt: 'none' }));
    expect(responseParams(stolen.location!).get('error')).toBe('login_required');
    const own = await victim.follow(authorizeUrl(web, { prompt: 'none' }));
    expect(responseParams(own.location!).get('code')).toBeTruthy();
  });

  it('keeps the other accounts of the browser when it signs in again', async () => {
    const first = await createHuman(server);
    const second = await createHuman(server);
    const agent = new Agent(server);
    await signIn(agent, authorizeUrl(web), first);
    const afterFirst = agent.cookies.get(cookieName);
    await signIn(agent, authorizeUrl(web, { prompt: 'login' }), second);
    expect(agent.cookies.get(cookieName)).not.toBe(afterFirst);
    const select = await agent.follow(authorizeUrl(web, { prompt: 'select_account' }));
    expect(select.html).toContain(first.loginName);
    expect(select.html).toContain(second.loginName);
  });
});

describe('a login in progress belongs to the browser that passed the password', () => {
  it('renews the cookie when the password passes: a planted value cannot finish the enrollment', async () => {
    const { person } = await personUnder({ forceMfa: true });
    // The attacker starts a login, and plants its cookie and the login's address in the victim's browser.
    const attacker = new Agent(server);
    const started = await attacker.follow(authorizeUrl(web));
    const loginUrl = `/ui/login/login?authRequestID=${formOf(started.html!).fields.authRequestID}`;
    const victim = new Agent(server);
    victim.cookies.set(cookieName, attacker.cookies.get(cookieName)!);
    let page = await submit(victim, await victim.follow(loginUrl), '/ui/login/loginname', { loginName: person.loginName });
    page = await submit(victim, page, '/ui/login/password', { password: person.password });
    expect(page.html).toContain('action="/ui/login/mfa/verify"');
    expect(victim.cookies.get(cookieName)).not.toBe(attacker.cookies.get(cookieName));
    // The attacker, holding the planted value, no longer sees the login (nor its TOTP secret).
    const hijack = await attacker.follow(loginUrl);
    expect(hijack.status).toBe(400);
    expect(hijack.html).not.toContain('mfa/verify');
    // The victim finishes as usual.
    const done = await submit(victim, page, '/ui/login/mfa/verify', { code: totpAt(shownSecret(page.html!), now()) });
    expect(done.location).toMatch(/code=/);
  });

  it('does not hand a pending enrollment secret to the next login name of the same request', async () => {
    const orgId = await newOrg();
    await setLoginPolicy(orgId, { forceMfa: true });
    const first = await createHuman(server, { orgId });
    const second = await createHuman(server, { orgId });
    const agent = new Agent(server);
    let page = await submit(agent, await toPassword(agent, first.loginName), '/ui/login/password', { password: first.password });
    const firstSecret = shownSecret(page.html!);
    // A hand-made post of another login name, with this page's request id and CSRF token.
    page = await agent.follow('/ui/login/loginname', { form: { ...formOf(page.html!, '/ui/login/mfa/verify').fields, loginName: second.loginName } });
    page = await submit(agent, page, '/ui/login/password', { password: second.password });
    expect(page.html).toContain('action="/ui/login/mfa/verify"');
    expect(shownSecret(page.html!)).not.toBe(firstSecret);
  });

  it('shows the login name as typed on the password page, never the user name behind an email', async () => {
    const person = await createHuman(server);
    const email = `${person.userName}@example.com`;
    const page = await toPassword(new Agent(server), email);
    expect(page.html).toContain(`<span class="user-chip">${email}</span>`);
    expect(page.html).not.toContain(person.loginName);
  });
});

describe('native apps (skipNativeAppSuccessPage)', () => {
  it('shows a success page that hands over to the app, unless the app skips it', async () => {
    const nativeRedirect = 'com.example.app:/callback';
    const person = await createHuman(server);
    const make = (skip: boolean) =>
      createWebApp(server, {
        redirectUris: [nativeRedirect],
        appType: 'OIDC_APP_TYPE_NATIVE',
        authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
        ...(skip ? { skipNativeAppSuccessPage: true } : {}),
      });
    const url = (app: WebApp) =>
      `/oauth/v2/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: nativeRedirect, response_type: 'code', scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })}`;
    const shown = await signIn(new Agent(server), url(await make(false)), person);
    expect(shown.status).toBe(200);
    expect(shown.html).toMatch(/<meta http-equiv="refresh" content="0;url=com\.example\.app:\/callback\?code=/);
    expect(shown.html).toContain('href="com.example.app:/callback?code=');
    const skipped = await signIn(new Agent(server), url(await make(true)), person);
    expect(skipped.location).toMatch(/^com\.example\.app:\/callback\?code=/);
  });
});

describe('import of login policies, users and projects', () => {
  it('imports what Sesame enforces and lists what it left out', async () => {
    const orgId = `imp${Date.now()}`;
    const res = await importOrgs(server, [
      {
        orgId,
        org: { name: uniqueName('imported') },
        loginPolicy: {
          allowUsernamePassword: true,
          allowRegister: false,
          forceMfa: true,
          secondFactors: ['SECOND_FACTOR_TYPE_OTP', 'SECOND_FACTOR_TYPE_OTP_SMS'],
          idps: [{ idpId: 'x', ownerType: 'IDP_OWNER_TYPE_ORG' }],
          passwordCheckLifetime: '3600s',
        },
        projects: [{ projectId: `${orgId}-p`, project: { name: 'P', privateLabelingSetting: 'PRIVATE_LABELING_SETTING_ENFORCE_PROJECT_RESOURCE_OWNER_POLICY' } }],
        humanUsers: [
          {
            userId: `${orgId}-u`,
            user: { userName: 'p', profile: { firstName: 'P', lastName: 'Q' }, email: { email: 'p@example.com' }, password: 'Some-Password-1', requestPasswordlessRegistration: true },
          },
        ],
      },
    ]);
    expect(res.status).toBe(200);
    const messages = (res.body.errors as { type: string; message: string }[]).map((e) => `${e.type}: ${e.message}`);
    expect(messages.some((m) => m.startsWith('login_policy') && m.includes('SECOND_FACTOR_TYPE_OTP_SMS'))).toBe(true);
    expect(messages.some((m) => m.startsWith('login_policy') && m.includes('idps'))).toBe(true);
    // requestPasswordlessRegistration mails a link to register a passkey (test/browser-passkeys.test.ts uses one).
    expect(messages.some((m) => m.startsWith('human_user'))).toBe(false);
    // Private labeling is Sesame's now (label policies): kept, not reported.
    expect(messages.some((m) => m.startsWith('project'))).toBe(false);
    expect(res.body.success.orgs[0].projectIds).toEqual([`${orgId}-p`]);
    const policy = await api(server, 'GET', '/management/v1/policies/login', { token: server.pat, orgId });
    expect(policy.body.policy).toMatchObject({ forceMfa: true, passwordCheckLifetime: '3600s', secondFactors: ['SECOND_FACTOR_TYPE_OTP'] });
    expect(policy.body.policy.allowRegister).toBeUndefined();
  });

  it('refuses login factors Sesame does not have at ImportHumanUser', async () => {
    const body = (extra: Record<string, unknown>) => ({ userName: uniqueName('np'), profile: { firstName: 'A', lastName: 'B' }, email: { email: 'a@b.example' }, password: 'Secret-123x', ...extra });
    for (const extra of [{ recoveryCodes: [{ raw: 'abc' }] }]) {
      const res = await api(server, 'POST', '/management/v1/users/human/_import', { token: server.pat, body: body(extra) });
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.body.message).toMatch(/not supported by Sesame/);
    }
    // A passkey's registration link is returned, as ZITADEL returns it, where the login policy allows passkeys.
    const notAllowed = await api(server, 'POST', '/management/v1/users/human/_import', { token: server.pat, body: body({ requestPasswordlessRegistration: true }) });
    expect(notAllowed.status).toBe(400);
    expect(notAllowed.body.message).toContain('passwordlessType');
    const orgId = await newOrg();
    await setLoginPolicy(orgId, { passwordlessType: 'PASSWORDLESS_TYPE_ALLOWED' });
    const passwordless = await api(server, 'POST', '/management/v1/users/human/_import', { token: server.pat, orgId, body: body({ requestPasswordlessRegistration: true }) });
    expect(passwordless.status, JSON.stringify(passwordless.body)).toBe(200);
    expect(passwordless.body.passwordlessRegistration).toMatchObject({ link: expect.stringContaining('/ui/login/passwordless/init?userID='), lifetime: '3600s' });
    // Links need a provider the org can use (test/federation.test.ts links real ones).
    const link = await api(server, 'POST', '/management/v1/users/human/_import', { token: server.pat, body: body({ idps: [{ configId: '1', externalUserId: 'e', displayName: 'd' }] }) });
    expect(link.status).toBe(404);
    expect(link.body.message).toContain('identity provider 1 not found');
  });
});
