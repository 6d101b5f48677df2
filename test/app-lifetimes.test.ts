import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import { api, basicAuth } from './helpers/api.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { tempDataDir } from './helpers/server.js';
import { Agent, createHuman, createWebApp, exchangeCode, signIn, type AppOptions, type Human, type WebApp } from './helpers/oidc.js';

/**
 * Token lifetimes per OIDC app (issue 13; fields named like ZITADEL's instance OIDC settings):
 * set and shown through the management API, bounded by the instance's, enforced on the access
 * token, the ID token and the refresh token family (idle and absolute), exported and imported
 * with the app. The clock is the test's: expiry is reached by moving it.
 */
const REDIRECT = 'http://localhost:9999/callback';
let server: InProcessServer;
const clock = new TestClock();
let person: Human;

beforeAll(async () => {
  server = await startInProcess({ clock });
  person = await createHuman(server);
});
afterAll(async () => {
  await server?.close();
});

async function signedInTokens(app: WebApp, on: InProcessServer = server, who: Human = person) {
  const params = new URLSearchParams({ client_id: app.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid offline_access' });
  const done = await signIn(new Agent(on), `/oauth/v2/authorize?${params}`, who);
  const tokens = await exchangeCode(on, app, done.location!);
  expect(tokens.status).toBe(200);
  return tokens;
}

const refresh = async (app: WebApp, token: string, on: InProcessServer = server) => {
  const res = await fetch(`${on.url}/oauth/v2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(app.clientId, app.clientSecret) },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
};

const SHORT: AppOptions = {
  accessTokenType: 'OIDC_TOKEN_TYPE_JWT',
  accessTokenLifetime: '300s',
  idTokenLifetime: '600s',
  refreshTokenIdleExpiration: '3600s',
  refreshTokenExpiration: '7200s',
};

describe('per-app token lifetimes', () => {
  it('are set and shown through the management API, and refused beyond the instance or below 1s', async () => {
    const app = await createWebApp(server, SHORT);
    const got = await api(server, 'GET', `/management/v1/projects/${app.projectId}/apps/${app.appId}`, { token: server.pat });
    expect(got.body.app.oidcConfig).toMatchObject({ accessTokenLifetime: '300s', idTokenLifetime: '600s', refreshTokenIdleExpiration: '3600s', refreshTokenExpiration: '7200s' });

    const project = app.projectId;
    const add = (body: Record<string, unknown>) =>
      api(server, 'POST', `/management/v1/projects/${project}/apps/oidc`, {
        token: server.pat,
        body: { name: `lifetimes-${Math.random()}`, redirectUris: [REDIRECT], authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC', grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'], ...body },
      });
    const tooLong = await add({ accessTokenLifetime: '86400s' });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.message).toMatch(/accessTokenLifetime 86400s is longer than the instance's \(43200s, SESAME_ACCESS_TOKEN_LIFETIME\)/);
    expect((await add({ refreshTokenExpiration: '8000000s' })).body.message).toMatch(/SESAME_REFRESH_TOKEN_LIFETIME/);
    expect((await add({ idTokenLifetime: '0.5s' })).status).toBe(400);
    expect((await add({ idTokenLifetime: 'soon' })).status).toBe(400);
    // 0s, like absent: the instance's (nothing shown).
    const zero = await add({ accessTokenLifetime: '0s' });
    expect(zero.status).toBe(200);
    const shown = await api(server, 'GET', `/management/v1/projects/${project}/apps/${zero.body.appId}`, { token: server.pat });
    expect(shown.body.app.oidcConfig.accessTokenLifetime).toBeUndefined();
    // API apps receive no tokens: the fields are not theirs.
    const apiApp = await api(server, 'POST', `/management/v1/projects/${project}/apps/api`, {
      token: server.pat,
      body: { name: 'api-lifetimes', authMethodType: 'API_AUTH_METHOD_TYPE_BASIC', accessTokenLifetime: '300s' },
    });
    expect(apiApp.status).toBe(400);
  });

  it("are enforced on the access token, the ID token and expires_in; another app keeps the instance's", async () => {
    const short = await createWebApp(server, SHORT);
    const tokens = await signedInTokens(short);
    expect(tokens).toMatchObject({ expires_in: 300 });
    const access = decodeJwt(tokens.access_token);
    expect(access.exp! - access.iat!).toBe(300);
    expect(tokens.claims.exp - tokens.claims.iat).toBe(600);

    const plain = await createWebApp(server, { accessTokenType: 'OIDC_TOKEN_TYPE_JWT' });
    const instance = await signedInTokens(plain);
    expect(instance).toMatchObject({ expires_in: 43200 });
    expect(instance.claims.exp - instance.claims.iat).toBe(43200);

    // The refreshed tokens keep the app's lifetimes.
    const refreshed = await refresh(short, tokens.refresh_token!);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.expires_in).toBe(300);
  });

  it('end a refresh token family at the app idle and absolute lifetimes', async () => {
    const app = await createWebApp(server, SHORT);
    // Idle: unused for longer than 3600 s.
    const idle = await signedInTokens(app);
    clock.advance(3601_000);
    expect((await refresh(app, idle.refresh_token!)).body.error).toBe('invalid_grant');

    // Used every 50 minutes it lives until the absolute 7200 s, not beyond.
    let token = (await signedInTokens(app)).refresh_token!;
    for (let i = 0; i < 2; i++) {
      clock.advance(3000_000);
      const r = await refresh(app, token);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      token = r.body.refresh_token;
    }
    clock.advance(1300_000);
    expect((await refresh(app, token)).body.error).toBe('invalid_grant');
  });

  it('are capped at use by an instance lifetime lowered since they were set', async () => {
    const dataDir = tempDataDir();
    const first = await startInProcess({ dataDir });
    const app = await createWebApp(first, SHORT);
    const someone = await createHuman(first);
    await first.stop();
    // Restarted with access tokens of 120 s and refresh families idle after 600 s: the app's 300 s and 3600 s are capped.
    const lowered = await startInProcess({ dataDir, clock, env: { SESAME_ACCESS_TOKEN_LIFETIME: '120s', SESAME_REFRESH_TOKEN_IDLE_LIFETIME: '600s' } });
    try {
      const tokens = await signedInTokens(app, lowered, someone);
      expect(tokens).toMatchObject({ status: 200, expires_in: 120 });
      const access = decodeJwt(tokens.access_token);
      expect(access.exp! - access.iat!).toBe(120);
      clock.advance(601_000);
      expect((await refresh(app, tokens.refresh_token!, lowered)).body.error).toBe('invalid_grant');
    } finally {
      await lowered.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('travel with the app through export and import', async () => {
    const org = await api(server, 'POST', '/management/v1/orgs', { token: server.pat, body: { name: `lifetimes-${Date.now()}` } });
    const orgId = org.body.id as string;
    const project = await api(server, 'POST', '/management/v1/projects', { token: server.pat, orgId, body: { name: 'lifetimes' } });
    const app = await api(server, 'POST', `/management/v1/projects/${project.body.id}/apps/oidc`, {
      token: server.pat,
      orgId,
      body: {
        name: 'lifetimes-web',
        redirectUris: [REDIRECT],
        authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
        grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'],
        ...SHORT,
      },
    });
    expect(app.status, JSON.stringify(app.body)).toBe(200);
    const exported = await api(server, 'POST', '/admin/v1/export', { token: server.pat, body: { orgIds: [orgId], timeout: '1m' } });
    expect(exported.status).toBe(200);
    const oidcApps = exported.body.orgs[0].oidcApps as { appId: string; app: Record<string, unknown> }[];
    expect(oidcApps.find((a) => a.appId === app.body.appId)!.app).toMatchObject({ accessTokenLifetime: '300s', refreshTokenIdleExpiration: '3600s' });

    // Into an instance whose access tokens live 60 s: the app's 300 s is reported and dropped, the rest kept.
    const target = await startInProcess({ env: { SESAME_ACCESS_TOKEN_LIFETIME: '60s' } });
    try {
      const imported = await api(target, 'POST', '/admin/v1/import', { token: target.pat, body: { timeout: '1m', dataOrgs: { orgs: exported.body.orgs } } });
      expect(imported.status, JSON.stringify(imported.body)).toBe(200);
      expect(JSON.stringify(imported.body.errors)).toMatch(/IMPORT-L1fe1.*accessTokenLifetime 300s is longer than the instance's \(60s/);
      const got = await api(target, 'GET', `/management/v1/projects/${project.body.id}/apps/${app.body.appId}`, { token: target.pat, orgId });
      expect(got.status, JSON.stringify(got.body)).toBe(200);
      expect(got.body.app.oidcConfig.accessTokenLifetime).toBeUndefined();
      expect(got.body.app.oidcConfig).toMatchObject({ idTokenLifetime: '600s', refreshTokenIdleExpiration: '3600s', refreshTokenExpiration: '7200s' });
    } finally {
      await target.close();
    }
  });
});
