import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { totpAt } from '../src/crypto/totp.js';
import { api, basicAuth, createMachineClient, postForm } from './helpers/api.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { Agent, createHuman, createWebApp, exchangeCode, signIn, submit, codeFlowTokens, tokenExchangeFixture, uniqueName, type Human, type WebApp } from './helpers/oidc.js';

/**
 * Issue 22, findings 2-5: a token dies with what it came from. Token exchange keeps the subject
 * token's session, authentication time, expiry and grant; every user has a revocation horizon
 * (UserRecord.revokedBefore) that a password set, a lock or a secret set moves, and that every
 * token path and the login check; a self-registered client acts for nobody but its own user.
 * Each test moves the clock a few seconds before the change it makes: tokens carry whole seconds.
 */
const REDIRECT = 'http://localhost:9999/callback';
const TE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const T = {
  access: 'urn:ietf:params:oauth:token-type:access_token',
  id: 'urn:ietf:params:oauth:token-type:id_token',
  userId: 'urn:zitadel:params:oauth:token-type:user_id',
};

let server: InProcessServer;
const clock = new TestClock();
let web: WebApp;
let introspector: string;
let projectAud: string;

const post = (path: string, body: Record<string, string>, auth?: string) => postForm(server, path, body, auth);

const webAuth = () => basicAuth(web.clientId, web.clientSecret);
const exchange = (params: Record<string, string>, auth = webAuth()) => post('/oauth/v2/token', { grant_type: TE, ...params }, auth);
const active = async (token: string) => (await post('/oauth/v2/introspect', { token }, introspector)).body.active as boolean;
const refresh = (token: string, auth = webAuth()) => post('/oauth/v2/token', { grant_type: 'refresh_token', refresh_token: token }, auth);
const later = () => clock.advance(3000);

/** A person signed in to the web app (code flow): its tokens, ID token claims and browser. */
const signedIn = (person: Human, scope = `openid profile offline_access ${projectAud}`) => codeFlowTokens(server, web, person, scope);

/** Exchanged for an access token (and, for an access token subject, an ID and a refresh token): an ID token carries no scope to pass on. */
async function exchanged(subjectToken: string, type = T.access, extra: Record<string, string> = {}) {
  const scope: Record<string, string> = type === T.access ? { scope: `openid profile offline_access ${projectAud}` } : {};
  const res = await exchange({ subject_token: subjectToken, subject_token_type: type, ...scope, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const setPassword = (userId: string) => api(server, 'POST', `/management/v1/users/${userId}/password`, { token: server.pat, body: { password: uniqueName('New-Passw0rd'), noChangeRequired: true } });

beforeAll(async () => {
  server = await startInProcess({ clock });
  ({ web, introspector, projectAud } = await tokenExchangeFixture(server, 'origins'));
});
afterAll(async () => {
  await server?.close();
});

describe('an ID token at token exchange is good only while its session and credentials are (finding 3)', () => {
  it('after sign-out the ID token exchanges for nothing, and what it was exchanged for before is revoked', async () => {
    const person = await createHuman(server);
    const session = await signedIn(person);
    const before = await exchanged(session.id_token, T.id);
    expect(await active(before.access_token)).toBe(true);
    later();
    const signOut = await session.agent.fetch(`/oidc/v1/end_session?id_token_hint=${encodeURIComponent(session.id_token)}`);
    expect(signOut.status).toBeLessThan(400);
    const after = await exchange({ subject_token: session.id_token, subject_token_type: T.id });
    expect(after.status).toBe(400);
    expect(after.body.error_description).toMatch(/session of the ID token has ended/);
    expect(await active(before.access_token)).toBe(false);
  });

  it("after an administrator's password reset the ID token and the access token exchange for nothing", async () => {
    const person = await createHuman(server);
    const session = await signedIn(person);
    later();
    expect((await setPassword(person.userId)).status).toBe(200);
    for (const [token, type] of [
      [session.id_token, T.id],
      [session.access_token, T.access],
    ] as const) {
      const res = await exchange({ subject_token: token, subject_token_type: type });
      expect({ type, status: res.status, error: res.body.error }).toEqual({ type, status: 400, error: 'invalid_request' });
    }
  });

  it('tokens made from an ID token keep its sid, auth_time and expiry: exchanging again does not extend it', async () => {
    const person = await createHuman(server);
    const session = await signedIn(person);
    const original = decodeJwt(session.id_token);
    later();
    const again = await exchanged(session.id_token, T.id, { requested_token_type: T.id });
    const next = decodeJwt(again.access_token);
    expect(next.sid).toBe(original.sid);
    expect(next.auth_time).toBe(original.auth_time);
    expect(next.exp).toBeLessThanOrEqual(original.exp!);
    // Past the original's expiry, neither it nor what it was exchanged for exchanges any more.
    clock.advance((original.exp! - Math.floor(clock.now() / 1000) + 1) * 1000);
    for (const token of [session.id_token, again.access_token]) {
      expect((await exchange({ subject_token: token, subject_token_type: T.id })).status).toBe(400);
    }
  });
});

describe('exchanged tokens die with what they came from (finding 4)', () => {
  it("sign-out ends the exchanged access token and refresh family (the subject's sid)", async () => {
    const person = await createHuman(server);
    const session = await signedIn(person);
    const tokens = await exchanged(session.access_token);
    expect(decodeJwt(tokens.id_token).sid).toBe(session.claims.sid);
    expect(await active(tokens.access_token)).toBe(true);
    await session.agent.fetch(`/oidc/v1/end_session?id_token_hint=${encodeURIComponent(session.id_token)}`);
    expect(await active(tokens.access_token)).toBe(false);
    expect((await refresh(tokens.refresh_token)).body.error).toBe('invalid_grant');
  });

  it('a password reset and a lock end them too, and they stay dead after the unlock', async () => {
    for (const change of ['password', 'lock'] as const) {
      const person = await createHuman(server);
      const session = await signedIn(person);
      const tokens = await exchanged(session.access_token);
      later();
      if (change === 'password') expect((await setPassword(person.userId)).status).toBe(200);
      else {
        expect((await api(server, 'POST', `/management/v1/users/${person.userId}/_lock`, { token: server.pat, body: {} })).status).toBe(200);
        expect((await api(server, 'POST', `/management/v1/users/${person.userId}/_unlock`, { token: server.pat, body: {} })).status).toBe(200);
      }
      expect({ change, active: await active(tokens.access_token) }).toEqual({ change, active: false });
      expect({ change, refresh: (await refresh(tokens.refresh_token)).body.error }).toEqual({ change, refresh: 'invalid_grant' });
      // A new sign-in after the unlock gets live tokens.
      if (change === 'lock') expect(await active((await signedIn(person)).access_token)).toBe(true);
    }
  });

  it("revoking the subject's refresh family revokes what was exchanged from its tokens", async () => {
    const person = await createHuman(server);
    const session = await signedIn(person);
    const tokens = await exchanged(session.access_token);
    const second = await exchanged(tokens.access_token);
    expect(await active(second.access_token)).toBe(true);
    const revoked = await post('/oauth/v2/revoke', { token: session.refresh_token!, token_type_hint: 'refresh_token' }, webAuth());
    expect(revoked.status).toBe(200);
    for (const t of [session.access_token, tokens.access_token, second.access_token]) expect(await active(t)).toBe(false);
    expect((await refresh(second.refresh_token)).body.error).toBe('invalid_grant');
  });

  it("a machine user's tokens from before a lock stay dead after the unlock, and from before a secret set", async () => {
    const machine = await createMachineClient(server, uniqueName('m'));
    const cc = async (secret = machine.clientSecret) =>
      (await post('/oauth/v2/token', { grant_type: 'client_credentials', scope: projectAud }, basicAuth(machine.clientId, secret))).body.access_token as string;
    const beforeLock = await cc();
    expect(await active(beforeLock)).toBe(true);
    later();
    expect((await api(server, 'POST', `/management/v1/users/${machine.userId}/_lock`, { token: server.pat, body: {} })).status).toBe(200);
    expect((await api(server, 'POST', `/management/v1/users/${machine.userId}/_unlock`, { token: server.pat, body: {} })).status).toBe(200);
    expect(await active(beforeLock)).toBe(false);
    const afterUnlock = await cc();
    expect(await active(afterUnlock)).toBe(true);
    later();
    const rotated = await api(server, 'PUT', `/management/v1/users/${machine.userId}/secret`, { token: server.pat, body: {} });
    expect(rotated.status).toBe(200);
    expect(await active(afterUnlock)).toBe(false);
    expect(await active(await cc(rotated.body.clientSecret))).toBe(true);
  });
});

describe('sibling: an id given again brings nothing back', () => {
  it("a user re-created under a removed user's id does not bring back the removed user's tokens", async () => {
    const userId = uniqueName('reborn');
    const make = async () => {
      const created = await api(server, 'POST', '/management/v1/users/machine', { token: server.pat, body: { userId, userName: uniqueName('reborn'), name: 'Reborn' } });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const secret = await api(server, 'PUT', `/management/v1/users/${userId}/secret`, { token: server.pat, body: {} });
      return (await post('/oauth/v2/token', { grant_type: 'client_credentials', scope: projectAud }, basicAuth(secret.body.clientId, secret.body.clientSecret))).body.access_token as string;
    };
    const old = await make();
    expect(await active(old)).toBe(true);
    expect((await api(server, 'DELETE', `/management/v1/users/${userId}`, { token: server.pat })).status).toBe(200);
    later();
    const fresh = await make();
    expect(await active(old)).toBe(false);
    expect(await active(fresh)).toBe(true);
  });
});

describe('a password reset ends a sign-in in progress (finding 5)', () => {
  const params = () => new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid' });
  /** A fresh browser through login name and password: the step after the password, and the browser. */
  async function pastPassword(loginName: string, password: string) {
    const agent = new Agent(server);
    let page = await agent.follow(`/oauth/v2/authorize?${params()}`);
    page = await submit(agent, page, '/ui/login/loginname', { loginName });
    return { agent, page: await submit(agent, page, '/ui/login/password', { password }) };
  }

  it('someone who passed the old password cannot pick the new one after an administrator reset it', async () => {
    const person = await createHuman(server);
    // The person must change the password at the next sign-in.
    expect((await api(server, 'POST', `/management/v1/users/${person.userId}/password`, { token: server.pat, body: { password: 'Changed-By-Admin-1' } })).status).toBe(200);
    const { agent, page } = await pastPassword(person.loginName, 'Changed-By-Admin-1');
    expect(page.html).toContain('action="/ui/login/password/change"');
    later();
    expect((await setPassword(person.userId)).status).toBe(200);
    const after = await submit(agent, page, '/ui/login/password/change', { password: 'Mine-Now-12345', passwordConfirm: 'Mine-Now-12345' });
    expect(after.location).toBeUndefined();
    expect(after.html).not.toContain('action="/ui/login/password/change"');
    // The attacker's password was not set: the administrator's new one is in force (the old one not).
    const retry = await signIn(new Agent(server), `/oauth/v2/authorize?${params()}`, { loginName: person.loginName, password: 'Mine-Now-12345' });
    expect(retry.location).toBeUndefined();
  });

  it('someone waiting at the TOTP enrollment prompt can neither enroll their own authenticator nor skip it after a reset', async () => {
    const org = await api(server, 'POST', '/management/v1/orgs', { token: server.pat, body: { name: uniqueName('mfa-org') } });
    const orgId = org.body.id as string;
    const policy = await api(server, 'POST', '/management/v1/policies/login', { token: server.pat, orgId, body: { allowUsernamePassword: true, mfaInitSkipLifetime: '720h' } });
    expect(policy.status, JSON.stringify(policy.body)).toBe(200);
    const person = await createHuman(server, { orgId });
    const { agent, page } = await pastPassword(person.loginName, person.password);
    expect(page.html).toContain('action="/ui/login/mfa/verify"');
    const secret = /<code class="secret">(.*?)<\/code>/.exec(page.html!)![1]!.replace(/<\/?span>| /g, '');
    later();
    expect((await api(server, 'POST', `/management/v1/users/${person.userId}/password`, { token: server.pat, orgId, body: { password: 'Reset-By-Admin-3', noChangeRequired: true } })).status).toBe(
      200,
    );
    const verified = await submit(agent, page, '/ui/login/mfa/verify', { code: totpAt(secret, Math.floor(clock.now() / 1000)) });
    expect(verified.location).toBeUndefined();
    const skipped = await submit(agent, page, '/ui/login/mfa/skip', {});
    expect(skipped.location).toBeUndefined();
    // No authenticator was enrolled: the person's next sign-in (with the new password) is offered enrollment again.
    const next = (await pastPassword(person.loginName, 'Reset-By-Admin-3')).page;
    expect(next.html).toContain('action="/ui/login/mfa/verify"');
  });

  it("a person's own password change ends the other sign-ins that passed the old password", async () => {
    const person = await createHuman(server);
    expect((await api(server, 'POST', `/management/v1/users/${person.userId}/password`, { token: server.pat, body: { password: 'Changed-By-Admin-4' } })).status).toBe(200);
    // Two browsers past the old password, both at the change step.
    const mine = await pastPassword(person.loginName, 'Changed-By-Admin-4');
    const other = await pastPassword(person.loginName, 'Changed-By-Admin-4');
    later();
    const changed = await submit(mine.agent, mine.page, '/ui/login/password/change', { password: 'Mine-Now-24680', passwordConfirm: 'Mine-Now-24680' });
    expect(changed.location).toContain('code=');
    // The other goes no further: it cannot replace the password just chosen.
    const stale = await submit(other.agent, other.page, '/ui/login/password/change', { password: 'Not-Mine-13579', passwordConfirm: 'Not-Mine-13579' });
    expect(stale.location).toBeUndefined();
    expect((await signIn(new Agent(server), `/oauth/v2/authorize?${params()}`, { loginName: person.loginName, password: 'Mine-Now-24680' })).location).toContain('code=');
  });

  it('a person changing a required password goes on signing in (their own change keeps their sign-in)', async () => {
    const person = await createHuman(server);
    expect((await api(server, 'POST', `/management/v1/users/${person.userId}/password`, { token: server.pat, body: { password: 'Changed-By-Admin-2' } })).status).toBe(200);
    const past = await pastPassword(person.loginName, 'Changed-By-Admin-2');
    later();
    const page = await submit(past.agent, past.page, '/ui/login/password/change', { password: 'Mine-Now-67890', passwordConfirm: 'Mine-Now-67890' });
    expect(page.location).toContain('code=');
    const tokens = await exchangeCode(server, web, page.location!);
    expect(tokens.status).toBe(200);
    expect(await active(tokens.access_token)).toBe(true);
  });
});

describe('a self-registered client acts for nobody but the person who signed in to it (finding 2)', () => {
  it('open registration refuses the token-exchange grant; a registered client gets no actor tokens, no user id subjects and no scope beyond its registration', async () => {
    const orgId = (await api(server, 'GET', '/management/v1/orgs/me', { token: server.pat })).body.org.id;
    const settings = { enabled: true, allowUnauthenticated: true, orgId, projectId: web.projectId };
    expect((await api(server, 'PUT', '/admin/v1/settings/dynamic_client_registration', { token: server.pat, body: settings })).status).toBe(200);
    expect((await api(server, 'PUT', '/admin/v1/policies/security', { token: server.pat, body: { enableImpersonation: true } })).status).toBe(200);
    const metadata = { redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token', TE], scope: 'openid profile', client_name: 'Stranger' };
    const register = (headers: Record<string, string>) =>
      fetch(`${server.url}/oauth/v2/register`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(metadata) });
    const anonymous = await register({});
    expect(anonymous.status).toBe(400);
    expect(await anonymous.json()).toMatchObject({ error: 'invalid_client_metadata' });
    // Registered with an initial access token, it may exchange its own user's tokens only.
    const registered = await register({ authorization: `Bearer ${server.pat}` });
    expect(registered.status).toBe(201);
    const client = (await registered.json()) as { client_id: string; client_secret: string };
    const auth = basicAuth(client.client_id, client.client_secret);
    // An instance owner signs in to it and allows it openid and profile.
    const owner = await createHuman(server);
    expect((await api(server, 'POST', '/admin/v1/members', { token: server.pat, body: { userId: owner.userId, roles: ['IAM_OWNER'] } })).status).toBe(200);
    const victim = await createHuman(server);
    const params = new URLSearchParams({ client_id: client.client_id, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid profile' });
    const done = await signIn(new Agent(server), `/oauth/v2/authorize?${params}`, owner);
    const tokens = await exchangeCode(server, { projectId: web.projectId, appId: '', clientId: client.client_id, clientSecret: client.client_secret }, done.location!);
    expect(tokens.status).toBe(200);
    const attempts = {
      actorForUserId: await exchange(
        { subject_token: victim.userId, subject_token_type: T.userId, actor_token: tokens.access_token, actor_token_type: T.access, scope: 'openid profile email phone offline_access' },
        auth,
      ),
      actorForToken: await exchange({ subject_token: tokens.access_token, subject_token_type: T.access, actor_token: tokens.access_token, actor_token_type: T.access }, auth),
      userIdAlone: await exchange({ subject_token: victim.userId, subject_token_type: T.userId }, auth),
    };
    for (const [name, res] of Object.entries(attempts)) expect({ name, status: res.status, error: res.body.error }).toEqual({ name, status: 400, error: 'unauthorized_client' });
    const beyond = await exchange({ subject_token: tokens.access_token, subject_token_type: T.access, scope: 'openid email' }, auth);
    expect(beyond.body.error).toBe('invalid_scope');
    // Its own person's token it may exchange, within what was allowed.
    const own = await exchange({ subject_token: tokens.access_token, subject_token_type: T.access }, auth);
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(own.body.scope).toBe('openid profile');
  });
});

describe("token exchange applies the app's project checks (finding 9)", () => {
  it('a subject without a grant on a project with projectRoleCheck gets no token from its apps', async () => {
    const project = await api(server, 'POST', '/management/v1/projects', { token: server.pat, body: { name: uniqueName('checked'), projectRoleCheck: true } });
    expect(project.status).toBe(200);
    const app = await createWebApp(server, { projectId: project.body.id, grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_TOKEN_EXCHANGE'] });
    const machine = await createMachineClient(server, uniqueName('ungranted'));
    const cc = await post('/oauth/v2/token', { grant_type: 'client_credentials', scope: `urn:zitadel:iam:org:project:id:${project.body.id}:aud` }, basicAuth(machine.clientId, machine.clientSecret));
    const attempt = () => exchange({ subject_token: cc.body.access_token, subject_token_type: T.access }, basicAuth(app.clientId, app.clientSecret));
    const refused = await attempt();
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: 'invalid_grant', error_description: 'the user has no grant on this project' });
    expect((await api(server, 'POST', `/management/v1/users/${machine.userId}/grants`, { token: server.pat, body: { projectId: project.body.id } })).status).toBe(200);
    expect((await attempt()).status).toBe(200);
  });
});
