import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { api } from './helpers/api.js';
import { Agent, createHuman, createWebApp, signIn, uniqueName, type Human, type WebApp, webAppConfig } from './helpers/oidc.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { freePort, tempDataDir } from './helpers/server.js';
import { LogoutReceiver } from './helpers/logout-receiver.js';
import { ownRow } from '../src/util/readonly.js';
import type { OidcAppConfig } from '../src/model/records.js';

/**
 * OpenID Connect Back-Channel Logout 1.0: a real receiver (an HTTP server in the test) gets the
 * logout token of each app that received tokens in an ended session, verifies it with jose
 * against Sesame's JWKS, and gets it even when it was failing until Sesame restarted. Retries
 * follow the test clock (moved, then `tick()`), never wall-clock waits.
 */
const REDIRECT = 'http://localhost:9999/callback';
const EVENT = 'http://schemas.openid.net/event/backchannel-logout';

let receiver: LogoutReceiver;

beforeAll(async () => {
  receiver = await LogoutReceiver.start();
});
afterAll(async () => {
  await receiver.close();
});

/** A web app whose back-channel logout URI is the receiver at `path` (http: dev mode). */
function appWithReceiver(server: InProcessServer, path: string, projectId?: string): Promise<WebApp> {
  return createWebApp(server, { devMode: true, ...(projectId ? { projectId } : {}), backChannelLogoutUri: receiver.url + path });
}

/** The code flow with openid-client in `agent`: the tokens and the ID token's claims. */
async function codeFlow(server: InProcessServer, app: WebApp, person: Human, agent = new Agent(server)) {
  const config = await oidc.discovery(new URL(server.issuer), app.clientId, app.clientSecret, oidc.ClientSecretBasic(app.clientSecret), {
    execute: [oidc.allowInsecureRequests],
  });
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: 'openid profile offline_access',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  const done = await signIn(agent, url.pathname + url.search, person);
  expect(done.location, done.html).toBeDefined();
  const tokens = await oidc.authorizationCodeGrant(config, new URL(done.location!), { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce });
  const claims = tokens.claims()!;
  expect(claims.sid).toEqual(expect.any(String));
  return { tokens, claims, agent, config };
}

/** Verifies a logout token as an app must (§2.6): signature by the JWKS, typ, iss, aud, iat/exp, events, sid, sub, no nonce. */
async function verifyLogoutToken(server: InProcessServer, token: string | undefined, app: WebApp, expected: { sid: unknown; sub: unknown }) {
  expect(token).toBeDefined();
  const jwks = createRemoteJWKSet(new URL(`${server.url}/oauth/v2/keys`));
  const { payload, protectedHeader } = await jwtVerify(token!, jwks, {
    issuer: server.issuer,
    audience: app.clientId,
    typ: 'logout+jwt',
    currentDate: new Date(server.clock.now()),
    requiredClaims: ['iat', 'exp', 'jti', 'events', 'sid', 'sub'],
  });
  expect(protectedHeader.typ).toBe('logout+jwt');
  expect(payload.events).toEqual({ [EVENT]: {} });
  expect(payload.sid).toBe(expected.sid);
  expect(payload.sub).toBe(expected.sub);
  expect(payload).not.toHaveProperty('nonce');
  expect(payload.aud).toBe(app.clientId);
  return payload;
}

const endSession = (agent: Agent, idToken: string) => agent.fetch(`/oidc/v1/end_session?id_token_hint=${encodeURIComponent(idToken)}`);

describe('delivery across a restart', () => {
  let dataDir: string;
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('a logout the receiver refused before Sesame stopped is delivered by the next start on the same data dir, and verifies', async () => {
    dataDir = tempDataDir();
    const env = { SESAME_PORT: String(await freePort()) };
    const clock = new TestClock();
    let server = await startInProcess({ dataDir, env, clock });
    try {
      const discovery = await (await fetch(`${server.url}/.well-known/openid-configuration`)).json();
      expect(discovery).toMatchObject({ backchannel_logout_supported: true, backchannel_logout_session_supported: true });
      const web = await appWithReceiver(server, '/restart/web');
      const untouched = await appWithReceiver(server, '/restart/untouched', web.projectId);
      const person = await createHuman(server);
      const { tokens, claims, agent } = await codeFlow(server, web, person);

      receiver.mode = 'fail';
      const ended = await endSession(agent, tokens.id_token!);
      expect(ended.status).toBe(200);
      await server.tick();
      expect(receiver.attempts('/restart/web').map((r) => r.answer)).toEqual(['fail']);
      expect(await server.app.ctx.logoutDeliveries.pending()).toBe(1);
      expect(server.logs()).toMatch(/back-channel logout attempt failed, will retry.*HTTP 503: down for maintenance/);

      await server.stop();
      receiver.mode = 'accept';
      clock.advance(31_000);
      server = await startInProcess({ dataDir, env, clock });
      await server.tick();
      const accepted = receiver.accepted('/restart/web');
      expect(accepted).toHaveLength(1);
      expect(accepted[0]!.method).toBe('POST');
      expect(accepted[0]!.contentType).toBe('application/x-www-form-urlencoded');
      await verifyLogoutToken(server, accepted[0]!.logoutToken, web, { sid: claims.sid, sub: claims.sub });
      expect(decodeProtectedHeader(accepted[0]!.logoutToken!).typ).toBe('logout+jwt');
      expect(await server.app.ctx.logoutDeliveries.pending()).toBe(0);
      expect(receiver.attempts('/restart/untouched')).toEqual([]);
      expect(untouched.clientId).not.toBe(web.clientId);
      // Delivered once: later ticks send nothing more.
      clock.advance(3_600_000);
      await server.tick();
      expect(receiver.attempts('/restart/web')).toHaveLength(2);
    } finally {
      await server.stop();
    }
  });
});

describe('what ends a session, and who is told', () => {
  let server: InProcessServer;
  beforeAll(async () => {
    server = await startInProcess();
    receiver.mode = 'accept';
  });
  afterAll(() => server?.close());

  it('only the apps that received tokens in the ended session are told, each once', async () => {
    const path = (name: string) => `/${uniqueName(name)}`;
    const [pa, pb, pc] = [path('a'), path('b'), path('c')];
    const a = await appWithReceiver(server, pa);
    const b = await appWithReceiver(server, pb, a.projectId);
    const c = await appWithReceiver(server, pc, a.projectId);
    const person = await createHuman(server);
    // One browser signs in to a, then b (SSO: the same session); another browser signs in to c.
    const first = await codeFlow(server, a, person);
    const second = await codeFlow(server, b, person, first.agent);
    expect(second.claims.sid).toBe(first.claims.sid);
    const other = await codeFlow(server, c, person);
    expect(other.claims.sid).not.toBe(first.claims.sid);

    expect((await endSession(first.agent, first.tokens.id_token!)).status).toBe(200);
    await server.tick();
    expect(receiver.accepted(pa)).toHaveLength(1);
    expect(receiver.accepted(pb)).toHaveLength(1);
    expect(receiver.attempts(pc)).toHaveLength(0);
    await verifyLogoutToken(server, receiver.accepted(pa)[0]!.logoutToken, a, { sid: first.claims.sid, sub: person.userId });
    await verifyLogoutToken(server, receiver.accepted(pb)[0]!.logoutToken, b, { sid: first.claims.sid, sub: person.userId });
    // Ending it again (the session is gone) tells nobody twice.
    await endSession(first.agent, first.tokens.id_token!);
    await server.tick();
    expect(receiver.attempts(pa)).toHaveLength(1);
  });

  it('an app without a back-channel logout URI is not told, and a session without tokens queues nothing', async () => {
    const plain = await createWebApp(server);
    const person = await createHuman(server);
    const { tokens, agent } = await codeFlow(server, plain, person);
    const before = receiver.received.length;
    expect((await endSession(agent, tokens.id_token!)).status).toBe(200);
    expect(await server.app.ctx.logoutDeliveries.pending()).toBe(0);
    await server.tick();
    expect(receiver.received.length).toBe(before);
  });

  for (const [action, act] of [
    ['deactivating', (userId: string) => api(server, 'POST', `/management/v1/users/${userId}/_deactivate`, { token: server.pat, body: {} })],
    ['locking', (userId: string) => api(server, 'POST', `/management/v1/users/${userId}/_lock`, { token: server.pat, body: {} })],
    ['removing', (userId: string) => api(server, 'DELETE', `/management/v1/users/${userId}`, { token: server.pat })],
    [
      'setting the password of',
      (userId: string) => api(server, 'POST', `/management/v1/users/${userId}/password`, { token: server.pat, body: { password: 'Another-Horse-7', noChangeRequired: true } }),
    ],
  ] as const) {
    it(`an administrator ${action} a user ends all of their sessions: every app with tokens in them is told, their tokens are revoked`, async () => {
      const p1 = `/${uniqueName('admin')}`;
      const p2 = `/${uniqueName('admin')}`;
      const one = await appWithReceiver(server, p1);
      const two = await appWithReceiver(server, p2, one.projectId);
      const person = await createHuman(server);
      const bystander = await createHuman(server);
      const first = await codeFlow(server, one, person);
      const second = await codeFlow(server, two, person); // another browser: another session
      await codeFlow(server, one, bystander);
      const res = await act(person.userId);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.details).toMatchObject({ sequence: expect.any(String), changeDate: expect.any(String) });
      await server.tick();
      expect(receiver.accepted(p1)).toHaveLength(1);
      expect(receiver.accepted(p2)).toHaveLength(1);
      await verifyLogoutToken(server, receiver.accepted(p1)[0]!.logoutToken, one, { sid: first.claims.sid, sub: person.userId });
      await verifyLogoutToken(server, receiver.accepted(p2)[0]!.logoutToken, two, { sid: second.claims.sid, sub: person.userId });
      // The refresh token of the ended session no longer works (not a 5xx).
      await expect(oidc.refreshTokenGrant(first.config, first.tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    });
  }

  it('user state changes follow ZITADEL: refused transitions are FailedPrecondition, reactivate and unlock restore sign-in', async () => {
    const person = await createHuman(server);
    const post = (action: string) => api(server, 'POST', `/management/v1/users/${person.userId}/${action}`, { token: server.pat, body: {} });
    expect((await post('_reactivate')).status).toBe(400);
    expect((await post('_unlock')).status).toBe(400);
    expect((await post('_deactivate')).status).toBe(200);
    expect((await post('_deactivate')).body).toMatchObject({ code: 9, message: expect.stringMatching(/AlreadyInactive/) });
    expect((await post('_lock')).status).toBe(400);
    expect((await post('_reactivate')).status).toBe(200);
    expect((await post('_lock')).status).toBe(200);
    const user = await api(server, 'GET', `/management/v1/users/${person.userId}`, { token: server.pat });
    expect(user.body.user.state).toBe('USER_STATE_LOCKED');
    expect((await post('_unlock')).status).toBe(200);
    const web = await createWebApp(server);
    await codeFlow(server, web, person);
    expect((await api(server, 'DELETE', `/management/v1/users/${person.userId}`, { token: server.pat })).status).toBe(200);
    expect((await api(server, 'GET', `/management/v1/users/${person.userId}`, { token: server.pat })).status).toBe(404);
    expect((await api(server, 'DELETE', `/management/v1/users/${person.userId}`, { token: server.pat })).status).toBe(404);
    // The name is free again.
    const again = await createHuman(server, { userName: person.userName });
    expect(again.userId).not.toBe(person.userId);
  });
});

describe('retries, giving up, slow receivers', () => {
  let server: InProcessServer;
  beforeAll(async () => {
    // The default attempt deadline (10 s): only the hanging receiver's test needs a short one, on a server of its own.
    server = await startInProcess({ env: { SESAME_BACKCHANNEL_LOGOUT_RETRY_FOR: '5m' } });
  });
  afterAll(() => server?.close());

  it('retries with exponential backoff on the moved clock (a redirect is a failure, not followed), then logs and drops the logout when the window closes', async () => {
    const path = `/${uniqueName('retry')}`;
    const web = await appWithReceiver(server, path);
    const person = await createHuman(server);
    const { tokens, agent } = await codeFlow(server, web, person);
    receiver.mode = 'redirect';
    expect((await endSession(agent, tokens.id_token!)).status).toBe(200);
    await server.tick();
    expect(receiver.attempts(path)).toHaveLength(1);
    expect(receiver.attempts('/elsewhere')).toHaveLength(0);
    receiver.mode = 'fail';
    // Not due again before 30 s.
    server.clock.advance(29_000);
    await server.tick();
    expect(receiver.attempts(path)).toHaveLength(1);
    server.clock.advance(1_000);
    await server.tick();
    expect(receiver.attempts(path)).toHaveLength(2);
    // Then 60 s (not before), then 120 s.
    server.clock.advance(59_000);
    await server.tick();
    expect(receiver.attempts(path)).toHaveLength(2);
    server.clock.advance(1_000);
    await server.tick();
    expect(receiver.attempts(path)).toHaveLength(3);
    server.clock.advance(120_000);
    await server.tick();
    expect(receiver.attempts(path)).toHaveLength(4);
    // The next wait (240 s) would end after the 5 minute window: given up, logged, dropped.
    expect(await server.app.ctx.logoutDeliveries.pending()).toBe(0);
    expect(server.logs()).toMatch(/back-channel logout failed for good: retry window closed, dropped.*"attempts":4.*HTTP 503/);
    server.clock.advance(3_600_000);
    await server.tick();
    expect(receiver.attempts(path)).toHaveLength(4);
  });

  it('a receiver that never answers neither holds up end_session nor an attempt beyond its deadline', async () => {
    // An attempt's deadline is real time (the receiver's socket): 300 ms here, so the test waits that long once.
    const server = await startInProcess({ env: { SESAME_BACKCHANNEL_LOGOUT_RETRY_FOR: '5m', SESAME_BACKCHANNEL_LOGOUT_TIMEOUT: '300ms' } });
    try {
      const path = `/${uniqueName('hang')}`;
      const web = await appWithReceiver(server, path);
      const person = await createHuman(server);
      const { tokens, agent } = await codeFlow(server, web, person);
      receiver.mode = 'hang';
      const before = receiver.received.length;
      const ended = await endSession(agent, tokens.id_token!);
      expect(ended.status).toBe(200);
      // The receiver has the request (or gets it soon) and has not answered; end_session already did.
      await receiver.arrived(before + 1);
      expect(receiver.attempts(path)).toHaveLength(1);
      await server.tick();
      expect(server.logs()).toMatch(/back-channel logout attempt failed, will retry.*no answer within 300 ms/);
      expect(await server.app.ctx.logoutDeliveries.pending()).toBe(1);
      receiver.mode = 'accept';
      server.clock.advance(30_000);
      await server.tick();
      expect(receiver.accepted(path)).toHaveLength(1);
      expect(await server.app.ctx.logoutDeliveries.pending()).toBe(0);
    } finally {
      await server.close();
    }
  });

  it('a session whose refresh token is in use stays live past the idle lifetime, so a password set later still ends it', async () => {
    const path = `/${uniqueName('idle')}`;
    const web = await appWithReceiver(server, path);
    const person = await createHuman(server);
    const { tokens, config, claims } = await codeFlow(server, web, person);
    // 700 h later (within the 720 h idle lifetime of sessions and refresh tokens) the app refreshes...
    server.clock.advance(700 * 3_600_000);
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    // ...and 100 h later the session, idle 800 h by its sign-in alone, is still the person's.
    server.clock.advance(100 * 3_600_000);
    await server.tick();
    const res = await api(server, 'POST', `/management/v1/users/${person.userId}/password`, { token: server.pat, body: { password: 'Another-Horse-7', noChangeRequired: true } });
    expect(res.status).toBe(200);
    await server.tick();
    expect(receiver.accepted(path)).toHaveLength(1);
    await verifyLogoutToken(server, receiver.accepted(path)[0]!.logoutToken, web, { sid: claims.sid, sub: person.userId });
    await expect(oidc.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });
});

describe('receivers no instance role vouches for', () => {
  let server: InProcessServer;
  /** An org administrator (ORG_OWNER of the default org, no instance role), calling with its PAT. */
  let orgAdmin: { url: string; issuer: string; pat: string };
  beforeAll(async () => {
    server = await startInProcess();
    receiver.mode = 'accept';
    const owner = await api(server, 'POST', '/management/v1/users/machine', { token: server.pat, body: { userName: uniqueName('org-admin'), name: 'Org admin' } });
    expect((await api(server, 'POST', '/management/v1/orgs/me/members', { token: server.pat, body: { userId: owner.body.userId, roles: ['ORG_OWNER'] } })).status).toBe(200);
    const pat = (await api(server, 'POST', `/management/v1/users/${owner.body.userId}/pats`, { token: server.pat, body: {} })).body.token as string;
    orgAdmin = { url: server.url, issuer: server.issuer, pat };
  });
  afterAll(() => server?.close());

  /** UpdateOIDCAppConfig with createWebApp's settings and `changes`. */
  const updateConfig = (as: { pat: string }, app: WebApp, changes: Record<string, unknown>) =>
    api(server, 'PUT', `/management/v1/projects/${app.projectId}/apps/${app.appId}/oidc_config`, {
      token: as.pat,
      body: webAppConfig({ devMode: true, ...changes }),
    });

  it('an org administrator cannot name an internal receiver; one an instance administrator named stays while the org administrator changes other settings', async () => {
    const project = await api(server, 'POST', '/management/v1/projects', { token: orgAdmin.pat, body: { name: uniqueName('org-made') } });
    expect(project.status).toBe(200);
    await expect(createWebApp(orgAdmin, { projectId: project.body.id, devMode: true, backChannelLogoutUri: `${receiver.url}/org-made` })).rejects.toThrow(/400.*127\.0\.0\.1 is not a public host/);
    const plain = await createWebApp(orgAdmin, { projectId: project.body.id, devMode: true });
    for (const uri of [`${receiver.url}/org-made`, 'http://localhost:8080/logout', 'https://[::ffff:10.0.0.1]/logout', 'https://[fd00::1]/logout']) {
      const res = await updateConfig(orgAdmin, plain, { backChannelLogoutUri: uri });
      expect({ uri, status: res.status, message: res.body.message }).toMatchObject({ uri, status: 400, message: expect.stringMatching(/not a public host/) });
    }
    // A public host is the org administrator's to name.
    expect((await updateConfig(orgAdmin, plain, { backChannelLogoutUri: 'https://rp.example.com/logout' })).status).toBe(200);

    // The instance administrator's app with an internal receiver, which the org administrator then edits.
    const path = `/${uniqueName('vouched')}`;
    const web = await appWithReceiver(server, path, project.body.id);
    expect((await updateConfig(orgAdmin, web, { backChannelLogoutUri: receiver.url + path, redirectUris: [REDIRECT, 'http://localhost:9999/other'] })).status).toBe(200);
    const person = await createHuman(server);
    const { tokens, agent } = await codeFlow(server, web, person);
    expect((await endSession(agent, tokens.id_token!)).status).toBe(200);
    await server.tick();
    expect(receiver.accepted(path)).toHaveLength(1);
    // Another internal receiver is not the org administrator's to name.
    const moved = await updateConfig(orgAdmin, web, { backChannelLogoutUri: `${receiver.url}${path}/moved` });
    expect(moved.status).toBe(400);
  });

  it('a stored receiver no instance role vouches for gets no logout at an internal address, until an instance administrator saves it', async () => {
    const path = `/${uniqueName('unvouched')}`;
    const web = await appWithReceiver(server, path);
    // As an app stored before Sesame recorded who named its receiver, or one whose host name an org
    // administrator pointed at an internal address: the same settings, vouched for by nobody.
    await server.app.caughtUp();
    const { oidc: settings } = server.app.ctx.clients.getApp(web.appId)!;
    await server.app.ctx.clients.updateOidcConfig(web.appId, ownRow<OidcAppConfig>(settings!), false);
    const person = await createHuman(server);
    const first = await codeFlow(server, web, person);
    expect((await endSession(first.agent, first.tokens.id_token!)).status).toBe(200);
    await server.tick();
    expect(receiver.attempts(path)).toHaveLength(0);
    expect(server.logs()).toMatch(/back-channel logout attempt failed, will retry.*127\.0\.0\.1 is not a public address/);

    // The instance administrator saves the same settings: now vouched for, the receiver is told.
    expect((await updateConfig({ pat: server.pat }, web, { backChannelLogoutUri: receiver.url + path })).status).toBe(200);
    server.clock.advance(30_000);
    await server.tick();
    expect(receiver.accepted(path)).toHaveLength(1);
  });
});
