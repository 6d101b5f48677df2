import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import bcrypt from 'bcryptjs';
import { decodeJwt } from 'jose';
import { isPublicAddress } from '../src/util/public-address.js';
import { api, basicAuth, createMachineClient, postForm } from './helpers/api.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { Agent, createHuman, createWebApp, exchangeCode, signIn, submit, codeFlowTokens, tokenExchangeFixture, uniqueName, type WebApp } from './helpers/oidc.js';

/**
 * What a review of the first trust fixes (issue 22) found still open, each kept as a regression
 * test: whose power an app carries, decided at use as well as at issuance; what exchanged tokens
 * keep of their origins (ceiling, grant, session) down refreshes and ID tokens; a revocation horizon
 * that voids its whole second; a reset raced by a password check; open redirects and non-public
 * ranges. The clock stands still unless a test moves it.
 */
const REDIRECT = 'http://localhost:9999/callback';
const TE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const T = {
  access: 'urn:ietf:params:oauth:token-type:access_token',
  id: 'urn:ietf:params:oauth:token-type:id_token',
};

let server: InProcessServer;
const clock = new TestClock();
let web: WebApp;
let introspector: string;
let projectAud: string;

const post = (path: string, body: Record<string, string>, auth?: string) => postForm(server, path, body, auth);

const appAuth = (app: WebApp) => basicAuth(app.clientId, app.clientSecret);
const exchange = (params: Record<string, string>, app: WebApp = web) => post('/oauth/v2/token', { grant_type: TE, ...params }, appAuth(app));
const active = async (token: string) => (await post('/oauth/v2/introspect', { token }, introspector)).body.active as boolean;
const later = () => clock.advance(3000);

const signedIn = (app: WebApp, person: { loginName: string; password: string }, scope: string) => codeFlowTokens(server, app, person, scope);

beforeAll(async () => {
  server = await startInProcess({ clock });
  ({ web, introspector, projectAud } = await tokenExchangeFixture(server, 'review'));
});
afterAll(async () => {
  await server?.close();
});

describe('org-level admins do not reach instance power through the management audience', () => {
  // An org owner's own app asked for `urn:zitadel:iam:org:project:id:zitadel:aud`, and the instance owner who
  // signed in to it handed the org owner a management-API token. An app carries a person's power only when
  // the person administers nothing beyond its org (domain/management-project.ts carriesPowerOf).
  it("an org owner's app does not collect a management-API token of an instance owner who signs in to it", async () => {
    const owner = await api(server, 'POST', '/management/v1/users/machine', { token: server.pat, body: { userName: uniqueName('org-owner'), name: 'Org owner' } });
    const ownerId = owner.body.userId as string;
    expect((await api(server, 'POST', '/management/v1/orgs/me/members', { token: server.pat, body: { userId: ownerId, roles: ['ORG_OWNER'] } })).status).toBe(200);
    const pat = (await api(server, 'POST', `/management/v1/users/${ownerId}/pats`, { token: server.pat, body: {} })).body.token as string;
    // Everything below with the org owner's own token.
    const project = await api(server, 'POST', '/management/v1/projects', { token: pat, body: { name: uniqueName('org-owned') } });
    expect(project.status).toBe(200);
    const app = await api(server, 'POST', `/management/v1/projects/${project.body.id}/apps/oidc`, {
      token: pat,
      body: {
        name: uniqueName('lure'),
        redirectUris: [REDIRECT],
        responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
        grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
        appType: 'OIDC_APP_TYPE_WEB',
        authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
        devMode: true,
      },
    });
    expect(app.status, JSON.stringify(app.body)).toBe(200);
    const lure: WebApp = { projectId: project.body.id, appId: app.body.appId, clientId: app.body.clientId, clientSecret: app.body.clientSecret };
    const iamOwner = await createHuman(server);
    expect((await api(server, 'POST', '/admin/v1/members', { token: server.pat, body: { userId: iamOwner.userId, roles: ['IAM_OWNER'] } })).status).toBe(200);
    const params = new URLSearchParams({ client_id: lure.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid urn:zitadel:iam:org:project:id:zitadel:aud' });
    const done = await signIn(new Agent(server), `/oauth/v2/authorize?${params}`, iamOwner);
    const tokens = done.location && new URL(done.location).searchParams.get('code') ? await exchangeCode(server, lure, done.location) : undefined;
    const grab = tokens?.access_token ? await api(server, 'POST', '/admin/v1/members', { token: tokens.access_token, body: { userId: ownerId, roles: ['IAM_OWNER'] } }) : { status: 0 };
    expect(grab.status).not.toBe(200);
    const owners = await api(server, 'POST', '/admin/v1/members/_search', { token: server.pat, body: {} });
    expect((owners.body.result as { userId: string }[]).map((m) => m.userId)).not.toContain(ownerId);
  });
});

describe('token exchange: what comes out must not outlive or escape what went in', () => {
  // The refresh grant issued with the app's full lifetimes, past the subject token's expiry; the family
  // now keeps it (FamilyGrant.notAfter) and every refreshed token is capped by it.
  it('a refresh of an exchanged family gives no access token outliving the subject token', async () => {
    const short = await createWebApp(server, { projectId: web.projectId, accessTokenLifetime: '300s' });
    const person = await createHuman(server);
    const subject = await signedIn(short, person, `openid offline_access ${projectAud}`);
    const subjectExp = (await post('/oauth/v2/introspect', { token: subject.access_token }, introspector)).body.exp as number;
    expect(subjectExp - Math.floor(clock.now() / 1000)).toBeLessThanOrEqual(300);
    const exchanged = await exchange({ subject_token: subject.access_token, subject_token_type: T.access, scope: 'openid offline_access' });
    expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200);
    expect(exchanged.body.expires_in).toBeLessThanOrEqual(300);
    expect(exchanged.body.refresh_token).toBeDefined();
    const refreshed = await post('/oauth/v2/token', { grant_type: 'refresh_token', refresh_token: exchanged.body.refresh_token }, appAuth(web));
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    const exp = (await post('/oauth/v2/introspect', { token: refreshed.body.access_token }, introspector)).body.exp as number;
    expect(exp).toBeLessThanOrEqual(subjectExp);
    expect(decodeJwt(refreshed.body.id_token).exp!).toBeLessThanOrEqual(subjectExp);
  });

  // An ID token carried no grant, so exchanging to an ID token and back dropped the grant chain; ID tokens
  // now name their grant (chain) in jti, checked when they are exchanged.
  it("revoking the subject's refresh family revokes tokens exchanged through an intermediate ID token", async () => {
    const person = await createHuman(server);
    const session = await signedIn(web, person, `openid profile offline_access ${projectAud}`);
    const idToken = await exchange({ subject_token: session.access_token, subject_token_type: T.access, requested_token_type: T.id, scope: `openid ${projectAud}` });
    expect(idToken.status, JSON.stringify(idToken.body)).toBe(200);
    const laundered = await exchange({ subject_token: idToken.body.access_token, subject_token_type: T.id });
    expect(laundered.status, JSON.stringify(laundered.body)).toBe(200);
    expect(await active(laundered.body.access_token)).toBe(true);
    const revoked = await post('/oauth/v2/revoke', { token: session.refresh_token!, token_type_hint: 'refresh_token' }, appAuth(web));
    expect(revoked.status).toBe(200);
    expect(await active(session.access_token)).toBe(false);
    expect(await active(laundered.body.access_token)).toBe(false);
  });

  // A replayed code revokes its grant; the ID token issued with the code is revoked with it.
  it("a replayed code's ID token exchanges for nothing", async () => {
    const person = await createHuman(server);
    const params = new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: `openid ${projectAud}` });
    const done = await signIn(new Agent(server), `/oauth/v2/authorize?${params}`, person);
    const stolen = await exchangeCode(server, web, done.location!);
    expect(stolen.status).toBe(200);
    const replay = await exchangeCode(server, web, done.location!);
    expect(replay.status).toBe(400);
    expect(await active(stolen.access_token)).toBe(false);
    const res = await exchange({ subject_token: stolen.id_token, subject_token_type: T.id });
    expect(res.status).toBe(400);
  });

  // An ID token (as a token exchange subject) dies with the app it was issued to (its azp).
  it('the ID token of a removed app exchanges for nothing at another app of its project', async () => {
    const doomed = await createWebApp(server, { projectId: web.projectId });
    const person = await createHuman(server);
    const tokens = await signedIn(doomed, person, 'openid');
    expect((await api(server, 'DELETE', `/management/v1/projects/${web.projectId}/apps/${doomed.appId}`, { token: server.pat })).status).toBe(200);
    expect(await active(tokens.access_token)).toBe(false);
    const res = await exchange({ subject_token: tokens.id_token, subject_token_type: T.id });
    expect(res.status).toBe(400);
  });
});

describe('the revocation horizon voids its whole second', () => {
  // Whoever holds a stolen secret mints in a loop: the token minted in the second of the rotation (or lock)
  // survived it. The horizon's whole second is void now; what begins after it in that second counts from the
  // next (domain/revocation-horizon.ts beginningAt).
  it.each(['secret', 'lock'] as const)('a machine token minted just before a %s is void after it', async (change) => {
    later();
    const machine = await createMachineClient(server, uniqueName('looping'));
    // At the start of a second: the token, then 400 ms later the change.
    clock.advance(1000 - (clock.now() % 1000));
    const stolen = await post('/oauth/v2/token', { grant_type: 'client_credentials', scope: projectAud }, basicAuth(machine.clientId, machine.clientSecret));
    expect(stolen.status).toBe(200);
    clock.advance(400);
    if (change === 'secret') expect((await api(server, 'PUT', `/management/v1/users/${machine.userId}/secret`, { token: server.pat, body: {} })).status).toBe(200);
    else {
      expect((await api(server, 'POST', `/management/v1/users/${machine.userId}/_lock`, { token: server.pat, body: {} })).status).toBe(200);
      expect((await api(server, 'POST', `/management/v1/users/${machine.userId}/_unlock`, { token: server.pat, body: {} })).status).toBe(200);
    }
    later();
    expect(await active(stolen.body.access_token)).toBe(false);
  });
});

describe("an administrator's reset during a password check", () => {
  // checkPassword read the hash, awaited its verification, then passed the sign-in at "now" and stored the
  // rehash of the old password over a reset made meanwhile. The check now counts from when its hash was read,
  // and a rehash replaces only the hash that was verified.
  it('neither lets the old password sign in nor puts the old password back', async () => {
    const oldPassword = 'Old-Passw0rd-1';
    const hash = bcrypt.hashSync(oldPassword, 10);
    const userName = uniqueName('raced');
    const imported = await api(server, 'POST', '/management/v1/users/human/_import', {
      token: server.pat,
      body: { userName, profile: { firstName: 'R', lastName: 'Aced' }, email: { email: `${userName}@example.com`, isEmailVerified: true }, hashedPassword: { value: hash } },
    });
    expect(imported.status, JSON.stringify(imported.body)).toBe(200);
    const userId = imported.body.userId as string;
    const loginName = (await api(server, 'GET', `/management/v1/users/${userId}`, { token: server.pat })).body.user.preferredLoginName as string;
    const params = new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid' });
    const agent = new Agent(server);
    let page = await agent.follow(`/oauth/v2/authorize?${params}`);
    page = await submit(agent, page, '/ui/login/loginname', { loginName });
    later();
    // The attacker, who knows the old password, submits it; its check is held until the administrator
    // has reset the password (the pool's verification waits for the test, not for the machine's speed).
    const pool = server.app.ctx.pool;
    const verify = pool.verifyPassword.bind(pool);
    let started!: () => void;
    let release!: () => void;
    const checking = new Promise<void>((r) => (started = r));
    const held = new Promise<void>((r) => (release = r));
    pool.verifyPassword = async (password, encodedHash) => {
      started();
      await held;
      return verify(password, encodedHash);
    };
    const newPassword = 'Admin-Reset-Passw0rd-2';
    let raced: Awaited<ReturnType<typeof submit>>;
    try {
      const racing = submit(agent, page, '/ui/login/password', { password: oldPassword });
      await checking;
      // The first check under way: every later verification runs at once again.
      pool.verifyPassword = verify;
      const reset = await api(server, 'POST', `/management/v1/users/${userId}/password`, { token: server.pat, body: { password: newPassword, noChangeRequired: true } });
      expect(reset.status).toBe(200);
      release();
      raced = await racing;
    } finally {
      pool.verifyPassword = verify;
      release();
    }
    // The administrator's password is in force; the old one is not.
    const withNew = await signIn(new Agent(server), `/oauth/v2/authorize?${params}`, { loginName, password: newPassword });
    const withOld = await signIn(new Agent(server), `/oauth/v2/authorize?${params}`, { loginName, password: oldPassword });
    const signedIn = (step: { location?: string }) => !!step.location?.includes('code=');
    expect({ racedSignsIn: signedIn(raced), newWorks: signedIn(withNew), oldWorks: signedIn(withOld) }).toEqual({ racedSignsIn: false, newWorks: true, oldWorks: false });
  });
});

describe('impersonation is checked at every use, not once at the exchange', () => {
  // Impersonation was decided at the exchange only: an org-level impersonator who impersonated a plain user
  // held instance power once that user was made instance owner. It is decided at every use now
  // (services/token-power.ts: the management API, refresh, token exchange).
  it("an org-level impersonator's token for a plain user does not become instance power when that user is promoted", async () => {
    expect((await api(server, 'PUT', '/admin/v1/policies/security', { token: server.pat, body: { enableImpersonation: true } })).status).toBe(200);
    const impersonator = await createMachineClient(server, uniqueName('org-imp'));
    expect((await api(server, 'POST', '/management/v1/orgs/me/members', { token: server.pat, body: { userId: impersonator.userId, roles: ['ORG_ADMIN_IMPERSONATOR'] } })).status).toBe(200);
    const person = await createHuman(server);
    const actor = await post(
      '/oauth/v2/token',
      { grant_type: 'client_credentials', scope: `openid urn:zitadel:iam:org:project:id:zitadel:aud ${projectAud}` },
      basicAuth(impersonator.clientId, impersonator.clientSecret),
    );
    expect(actor.status).toBe(200);
    const impersonated = await exchange({
      subject_token: person.userId,
      subject_token_type: 'urn:zitadel:params:oauth:token-type:user_id',
      actor_token: actor.body.access_token,
      actor_token_type: T.access,
    });
    expect(impersonated.status, JSON.stringify(impersonated.body)).toBe(200);
    // Today the person holds no role: the token opens the API as them, with nothing allowed.
    expect((await api(server, 'POST', '/admin/v1/members/_search', { token: impersonated.body.access_token, body: {} })).status).toBe(403);
    // The instance owner promotes the person; the impersonator could not impersonate them now.
    expect((await api(server, 'POST', '/admin/v1/members', { token: server.pat, body: { userId: person.userId, roles: ['IAM_OWNER'] } })).status).toBe(200);
    const again = await exchange({ subject_token: person.userId, subject_token_type: 'urn:zitadel:params:oauth:token-type:user_id', actor_token: actor.body.access_token, actor_token_type: T.access });
    expect(again.status).toBe(403);
    const grab = await api(server, 'POST', '/admin/v1/members', { token: impersonated.body.access_token, body: { userId: impersonator.userId, roles: ['IAM_OWNER'] } });
    expect(grab.status).not.toBe(200);
  });
});

describe("an impersonation dies with the actor's session", () => {
  // Exchanged tokens kept the subject's session only: the actor's sign-out left the impersonation running.
  // They keep a session of either party, and the other's in their grant chain (`@<sid>`).
  it("the actor's sign-out ends tokens exchanged with its token as actor", async () => {
    expect((await api(server, 'PUT', '/admin/v1/policies/security', { token: server.pat, body: { enableImpersonation: true } })).status).toBe(200);
    const actor = await createHuman(server);
    expect((await api(server, 'POST', '/management/v1/orgs/me/members', { token: server.pat, body: { userId: actor.userId, roles: ['ORG_END_USER_IMPERSONATOR'] } })).status).toBe(200);
    const agent = new Agent(server);
    const params = new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: `openid ${projectAud}` });
    const done = await signIn(agent, `/oauth/v2/authorize?${params}`, actor);
    const session = await exchangeCode(server, web, done.location!);
    expect(session.status).toBe(200);
    const machine = await createMachineClient(server, uniqueName('subject'));
    const subject = await post('/oauth/v2/token', { grant_type: 'client_credentials', scope: projectAud }, basicAuth(machine.clientId, machine.clientSecret));
    const impersonated = await exchange({ subject_token: subject.body.access_token, subject_token_type: T.access, actor_token: session.access_token, actor_token_type: T.access });
    expect(impersonated.status, JSON.stringify(impersonated.body)).toBe(200);
    expect(await active(impersonated.body.access_token)).toBe(true);
    const signOut = await agent.fetch(`/oidc/v1/end_session?id_token_hint=${encodeURIComponent(session.id_token)}`);
    expect(signOut.status).toBeLessThan(400);
    expect(await active(session.access_token)).toBe(false);
    expect(await active(impersonated.body.access_token)).toBe(false);
  });
});

describe('end_session is no open redirector with open registration', () => {
  // With client_id alone it redirected to any registered post_logout_redirect_uri, which anyone may register
  // (RFC 9700 §4.11.2): it redirects only with an id_token_hint issued to that client.
  it('an anonymous registrant does not get a redirect from the IdP to its own site without an id_token_hint', async () => {
    const orgId = (await api(server, 'GET', '/management/v1/orgs/me', { token: server.pat })).body.org.id;
    const registration = await api(server, 'PUT', '/admin/v1/settings/dynamic_client_registration', {
      token: server.pat,
      body: { enabled: true, allowUnauthenticated: true, orgId, projectId: web.projectId },
    });
    expect(registration.status, JSON.stringify(registration.body)).toBe(200);
    const registered = await fetch(`${server.url}/oauth/v2/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: ['https://evil.example/cb'], post_logout_redirect_uris: ['https://evil.example/phish'], client_name: 'Anyone' }),
    });
    expect(registered.status).toBe(201);
    const { client_id } = (await registered.json()) as { client_id: string };
    const res = await fetch(`${server.url}/oidc/v1/end_session?client_id=${client_id}&post_logout_redirect_uri=${encodeURIComponent('https://evil.example/phish')}`, { redirect: 'manual' });
    const endSessionLocation = res.headers.get('location') ?? '';
    // The authorization endpoint's errors before any sign-in likewise (a bad response_type, no user involved).
    const error = await fetch(`${server.url}/oauth/v2/authorize?client_id=${client_id}&redirect_uri=${encodeURIComponent('https://evil.example/cb')}&response_type=bogus&scope=openid`, {
      redirect: 'manual',
    });
    expect({ endSession: endSessionLocation.includes('evil.example'), authorizeError: (error.headers.get('location') ?? '').includes('evil.example') }).toEqual({
      endSession: false,
      authorizeError: false,
    });
  });
});

describe('non-public IPv6 ranges', () => {
  // 100::/64 (discard) and 2001::/23 (IETF protocol assignments; Teredo's 2001::/32 embeds an IPv4 address).
  it.each(['100::1', '2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001:2::1'])('%s is not public', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });
});

describe('siblings the review named for a decision', () => {
  it("an org owner cannot change the sign-in policies of an org whose people include instance owners, only of its own people's", async () => {
    const owner = await api(server, 'POST', '/management/v1/users/machine', { token: server.pat, body: { userName: uniqueName('policy-owner'), name: 'Owner' } });
    expect((await api(server, 'POST', '/management/v1/orgs/me/members', { token: server.pat, body: { userId: owner.body.userId, roles: ['ORG_OWNER'] } })).status).toBe(200);
    const pat = (await api(server, 'POST', `/management/v1/users/${owner.body.userId}/pats`, { token: server.pat, body: {} })).body.token as string;
    // The default org holds the bootstrap admin (an instance owner): one wrong password would lock it out.
    for (const [method, path, body] of [
      ['POST', '/management/v1/policies/lockout', { maxPasswordAttempts: '1' }],
      ['POST', '/management/v1/policies/login', { allowUsernamePassword: true, passwordCheckLifetime: '1s' }],
      ['DELETE', '/management/v1/policies/login', {}],
    ] as const) {
      const res = await api(server, method, path, { token: pat, body });
      expect({ path, method, status: res.status }).toEqual({ path, method, status: 403 });
    }
    // In an org of its own people (no one there administers beyond it) it sets them.
    const org = await api(server, 'POST', '/management/v1/orgs', { token: server.pat, body: { name: uniqueName('own-people') } });
    expect((await api(server, 'POST', '/management/v1/orgs/me/members', { token: server.pat, orgId: org.body.id, body: { userId: owner.body.userId, roles: ['ORG_OWNER'] } })).status).toBe(200);
    const own = await api(server, 'POST', '/management/v1/policies/lockout', { token: pat, orgId: org.body.id, body: { maxPasswordAttempts: '3' } });
    expect(own.status, JSON.stringify(own.body)).toBe(200);
  });

  it('a public client cannot turn an ID token (no proof of possession) into access tokens', async () => {
    const spa = await api(server, 'POST', `/management/v1/projects/${web.projectId}/apps/oidc`, {
      token: server.pat,
      body: {
        name: uniqueName('spa'),
        redirectUris: [REDIRECT],
        responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
        grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_TOKEN_EXCHANGE'],
        appType: 'OIDC_APP_TYPE_USER_AGENT',
        authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
        devMode: true,
      },
    });
    expect(spa.status, JSON.stringify(spa.body)).toBe(200);
    const person = await createHuman(server);
    const { id_token } = await signedIn(web, person, 'openid');
    // The web app's ID token names the SPA's project too: a finder uses the SPA's client id.
    const res = await post('/oauth/v2/token', { grant_type: TE, client_id: spa.body.clientId, subject_token: id_token, subject_token_type: T.id });
    expect(res.status).toBe(400);
    expect(res.body.error_description).toMatch(/public client cannot exchange ID tokens/);
  });

  it('an actor locked by wrong passwords acts for nobody while locked', async () => {
    const org = await api(server, 'POST', '/management/v1/orgs', { token: server.pat, body: { name: uniqueName('lockout-org') } });
    const orgId = org.body.id as string;
    expect((await api(server, 'POST', '/management/v1/policies/lockout', { token: server.pat, orgId, body: { maxPasswordAttempts: '2' } })).status).toBe(200);
    const project = await api(server, 'POST', '/management/v1/projects', { token: server.pat, orgId, body: { name: uniqueName('support') } });
    const oidcApp = await api(server, 'POST', `/management/v1/projects/${project.body.id}/apps/oidc`, {
      token: server.pat,
      orgId,
      body: { name: 'support', redirectUris: [REDIRECT], grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_TOKEN_EXCHANGE'] },
    });
    const app: WebApp = { projectId: project.body.id, appId: oidcApp.body.appId, clientId: oidcApp.body.clientId, clientSecret: oidcApp.body.clientSecret };
    const api2 = await api(server, 'POST', `/management/v1/projects/${project.body.id}/apps/api`, { token: server.pat, orgId, body: { name: 'rs' } });
    const rs = basicAuth(api2.body.clientId, api2.body.clientSecret);
    expect((await api(server, 'PUT', '/admin/v1/policies/security', { token: server.pat, body: { enableImpersonation: true } })).status).toBe(200);
    const actor = await createHuman(server, { orgId });
    expect((await api(server, 'POST', '/management/v1/orgs/me/members', { token: server.pat, orgId, body: { userId: actor.userId, roles: ['ORG_END_USER_IMPERSONATOR'] } })).status).toBe(200);
    const subject = await createHuman(server, { orgId });
    const session = await signedIn(app, actor, 'openid');
    const impersonated = await post(
      '/oauth/v2/token',
      { grant_type: TE, subject_token: subject.userId, subject_token_type: 'urn:zitadel:params:oauth:token-type:user_id', actor_token: session.access_token, actor_token_type: T.access },
      appAuth(app),
    );
    expect(impersonated.status, JSON.stringify(impersonated.body)).toBe(200);
    const activeHere = async () => (await post('/oauth/v2/introspect', { token: impersonated.body.access_token }, rs)).body.active as boolean;
    expect(await activeHere()).toBe(true);
    // Someone guesses the actor's password twice: locked (its sessions stay, suspended).
    for (let i = 0; i < 2; i++)
      await signIn(new Agent(server), `/oauth/v2/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid' })}`, {
        loginName: actor.loginName,
        password: 'wrong-guess',
      });
    expect((await api(server, 'GET', `/management/v1/users/${actor.userId}`, { token: server.pat, orgId })).body.user.state).toBe('USER_STATE_LOCKED');
    expect(await activeHere()).toBe(false);
  });
});
