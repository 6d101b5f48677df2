import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { createApiApp } from './helpers/api.js';
import { Agent, createHuman, createWebApp, responseParams, signIn, type Human, type WebApp } from './helpers/oidc.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';

/**
 * The authorization code flow against a real relying-party library (openid-client): PKCE, the
 * ID token, code replay, redirect_uri and verifier checks, refresh rotation and reuse detection,
 * userinfo per scope, revocation and the state after sign-out.
 */
let server: InProcessServer;
let web: WebApp;
let spa: WebApp;
let person: Human;
let resource: { clientId: string; clientSecret: string };
const REDIRECT = 'http://localhost:9999/callback';

const configFor = (app: WebApp, method: 'basic' | 'post' | 'none' = 'basic') =>
  oidc.discovery(
    new URL(server.issuer),
    app.clientId,
    method === 'none' ? {} : app.clientSecret,
    method === 'basic' ? oidc.ClientSecretBasic(app.clientSecret) : method === 'post' ? oidc.ClientSecretPost(app.clientSecret) : oidc.None(),
    { execute: [oidc.allowInsecureRequests] },
  );

/** Runs a full code flow in a fresh agent; returns the tokens and what was sent. */
async function codeFlow(app: WebApp, options: { scope?: string; method?: 'basic' | 'post' | 'none'; agent?: Agent; extra?: Record<string, string> } = {}) {
  const config = await configFor(app, options.method);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: options.scope ?? 'openid profile email offline_access',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...options.extra,
  });
  const agent = options.agent ?? new Agent(server);
  const done = await signIn(agent, url.pathname + url.search, person);
  expect(done.location, done.html).toBeDefined();
  const tokens = await oidc.authorizationCodeGrant(config, new URL(done.location!), {
    pkceCodeVerifier: verifier,
    expectedState: state,
    expectedNonce: nonce,
  });
  return { tokens, config, agent, location: done.location!, verifier };
}

const introspect = async (token: string) => {
  const res = await fetch(`${server.url}/oauth/v2/introspect`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${resource.clientId}:${resource.clientSecret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ token }).toString(),
  });
  return (await res.json()) as Record<string, unknown>;
};

beforeAll(async () => {
  server = await startInProcess();
  web = await createWebApp(server);
  spa = await createWebApp(server, {
    projectId: web.projectId,
    appType: 'OIDC_APP_TYPE_USER_AGENT',
    authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
    accessTokenType: 'OIDC_TOKEN_TYPE_JWT',
    devMode: true,
  });
  person = await createHuman(server, { phone: '+41 79 123 45 67' });
  const api = await createApiApp(server, 'resource');
  // The API app introspects tokens whose audience is its project: the web app's project.
  resource = await (async () => {
    const { api: call } = await import('./helpers/api.js');
    const app = await call(server, 'POST', `/management/v1/projects/${web.projectId}/apps/api`, {
      token: server.pat,
      body: { name: 'introspector', authMethodType: 'API_AUTH_METHOD_TYPE_BASIC' },
    });
    return { clientId: app.body.clientId, clientSecret: app.body.clientSecret };
  })();
  void api;
});

afterAll(async () => {
  await server?.close();
});

describe('authorization code flow', () => {
  it('signs a person in with PKCE and client_secret_basic; the ID token carries the session claims', async () => {
    const { tokens } = await codeFlow(web);
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.refresh_token).toBeDefined();
    expect(tokens.scope).toBe('openid profile email offline_access');
    const claims = tokens.claims()!;
    expect(claims.iss).toBe(server.issuer);
    expect(claims.sub).toBe(person.userId);
    expect(claims.aud).toContain(web.clientId);
    expect(claims.azp).toBe(web.clientId);
    expect(claims.amr).toEqual(['pwd']);
    expect(typeof claims.sid).toBe('string');
    expect(typeof claims.auth_time).toBe('number');
    expect(typeof claims.at_hash).toBe('string');
    // With an access token, profile and email claims come from userinfo (idTokenUserinfoAssertion is off).
    expect(claims.email).toBeUndefined();
    expect(claims.name).toBeUndefined();
    const active = await introspect(tokens.access_token);
    expect(active).toMatchObject({ active: true, sub: person.userId, client_id: web.clientId });
  });
});

const tokenRequest = (body: Record<string, string>, auth?: WebApp) =>
  fetch(`${server.url}/oauth/v2/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(auth ? { authorization: `Basic ${Buffer.from(`${auth.clientId}:${auth.clientSecret}`).toString('base64')}` } : {}),
    },
    body: new URLSearchParams(body).toString(),
  });

/** Signs in and returns the code without exchanging it. */
async function codeOnly(app: WebApp, extra: Record<string, string> = {}) {
  const verifier = oidc.randomPKCECodeVerifier();
  const params = new URLSearchParams({
    client_id: app.clientId,
    redirect_uri: REDIRECT,
    response_type: 'code',
    scope: 'openid offline_access',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...extra,
  });
  const done = await signIn(new Agent(server), `/oauth/v2/authorize?${params}`, person);
  return { code: responseParams(done.location!).get('code')!, verifier };
}

describe('code exchange rules', () => {
  it('accepts client_secret_post and a public client with PKCE (none)', async () => {
    const post = await codeFlow(web, { method: 'post', scope: 'openid' });
    expect(post.tokens.refresh_token).toBeUndefined();
    const pub = await codeFlow(spa, { method: 'none', scope: 'openid email' });
    expect(pub.tokens.access_token.split('.')).toHaveLength(3);
    expect(pub.tokens.claims()!.azp).toBe(spa.clientId);
  });

  it('answers a second use of a code with invalid_grant and revokes the tokens of the first use', async () => {
    const { code, verifier } = await codeOnly(web);
    const exchange = () => tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }, web);
    const first = await exchange();
    expect(first.status).toBe(200);
    const tokens = (await first.json()) as { access_token: string; refresh_token: string };
    expect((await introspect(tokens.access_token)).active).toBe(true);
    const second = await exchange();
    expect(second.status).toBe(400);
    expect(await second.json()).toMatchObject({ error: 'invalid_grant' });
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
    const refresh = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, web);
    expect(refresh.status).toBe(400);
    expect(await refresh.json()).toMatchObject({ error: 'invalid_grant' });
  });

  it('refuses a wrong code_verifier, a missing one, and a different redirect_uri without burning the code', async () => {
    const { code, verifier } = await codeOnly(web);
    const wrong = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: oidc.randomPKCECodeVerifier() }, web);
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ error: 'invalid_grant', error_description: 'invalid code_verifier' });
    const missing = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, web);
    expect(await missing.json()).toMatchObject({ error: 'invalid_request' });
    const otherRedirect = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: 'http://localhost:9999/other', code_verifier: verifier }, web);
    expect(otherRedirect.status).toBe(400);
    expect(await otherRedirect.json()).toMatchObject({ error: 'invalid_grant' });
    const right = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }, web);
    expect(right.status).toBe(200);
  });

  it("refuses another client's code, garbage codes and apps without the grant", async () => {
    const { code, verifier } = await codeOnly(web);
    const other = await createWebApp(server, { projectId: web.projectId });
    const stolen = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }, other);
    expect(stolen.status).toBe(400);
    expect(await stolen.json()).toMatchObject({ error: 'invalid_grant' });
    const garbage = await tokenRequest({ grant_type: 'authorization_code', code: 'nope', redirect_uri: REDIRECT }, web);
    expect(await garbage.json()).toMatchObject({ error: 'invalid_grant' });
    const implicitOnly = await createWebApp(server, {
      responseTypes: ['OIDC_RESPONSE_TYPE_ID_TOKEN'],
      grantTypes: ['OIDC_GRANT_TYPE_IMPLICIT'],
      redirectUris: ['https://rp.example/cb'],
    });
    const notAllowed = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT }, implicitOnly);
    expect(notAllowed.status).toBe(400);
    expect(await notAllowed.json()).toMatchObject({ error: 'unauthorized_client' });
    const noAuth = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, client_id: web.clientId });
    expect(noAuth.status).toBe(401);
    expect(await noAuth.json()).toMatchObject({ error: 'invalid_client' });
  });
});

describe('refresh tokens', () => {
  it('rotates on every use, keeps the scope or narrows it, and refuses a broader one', async () => {
    const { tokens, config } = await codeFlow(web);
    const first = tokens.refresh_token!;
    const next = await oidc.refreshTokenGrant(config, first);
    expect(next.refresh_token).toBeDefined();
    expect(next.refresh_token).not.toBe(first);
    expect(next.scope).toBe('openid profile email offline_access');
    expect(next.claims()!.sub).toBe(person.userId);
    expect(next.claims()!.auth_time).toBe(tokens.claims()!.auth_time);
    const narrowed = await oidc.refreshTokenGrant(config, next.refresh_token!, { scope: 'openid email' });
    expect(narrowed.scope).toBe('openid email');
    const userinfo = await oidc.fetchUserInfo(config, narrowed.access_token, person.userId);
    expect(userinfo.email).toBeDefined();
    expect(userinfo.name).toBeUndefined();
    await expect(oidc.refreshTokenGrant(config, narrowed.refresh_token!, { scope: 'openid phone' })).rejects.toMatchObject({ error: 'invalid_scope' });
    // The refused request did not rotate: the token still works.
    const again = await oidc.refreshTokenGrant(config, narrowed.refresh_token!);
    expect(again.access_token).toBeDefined();
  });

  it('detects reuse of a rotated token and revokes the whole family', async () => {
    const { tokens, config } = await codeFlow(web);
    const rotated = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect((await introspect(rotated.access_token)).active).toBe(true);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(oidc.refreshTokenGrant(config, rotated.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect(await introspect(rotated.access_token)).toEqual({ active: false });
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
  });

  it('lets a public client refresh with client_id alone, and not another client', async () => {
    const { tokens } = await codeFlow(spa, { method: 'none' });
    const stolen = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token! }, web);
    expect(stolen.status).toBe(400);
    expect(await stolen.json()).toMatchObject({ error: 'invalid_grant' });
    const res = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: spa.clientId });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, string>;
    expect(body.refresh_token).toBeDefined();
    expect(body.id_token).toBeDefined();
  });

  it('revokes a refresh token and the access tokens issued with it (public client, client_id alone)', async () => {
    const { tokens, config } = await codeFlow(spa, { method: 'none' });
    expect((await introspect(tokens.access_token)).active).toBe(true);
    await oidc.tokenRevocation(config, tokens.refresh_token!);
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });
});

describe('userinfo', () => {
  it('returns claims per granted scope', async () => {
    const cases: [string, string[], string[]][] = [
      ['openid', ['sub'], ['name', 'email', 'phone_number']],
      ['openid profile', ['sub', 'name', 'given_name', 'family_name', 'preferred_username', 'updated_at', 'locale'], ['email', 'phone_number']],
      ['openid email', ['sub', 'email', 'email_verified'], ['name', 'phone_number']],
      ['openid phone', ['sub', 'phone_number', 'phone_number_verified'], ['name', 'email']],
      ['openid urn:zitadel:iam:user:resourceowner', ['sub', 'urn:zitadel:iam:user:resourceowner:id', 'urn:zitadel:iam:user:resourceowner:name'], ['email']],
    ];
    for (const [scope, present, absent] of cases) {
      const { tokens, config } = await codeFlow(web, { scope });
      const claims = await oidc.fetchUserInfo(config, tokens.access_token, person.userId);
      for (const c of present) expect(claims, `${scope}: ${c}`).toHaveProperty([c]);
      for (const c of absent) expect(claims, `${scope}: ${c}`).not.toHaveProperty([c]);
    }
  });

  it('returns ZITADEL role and metadata claims for their URN scopes', async () => {
    const { api: call } = await import('./helpers/api.js');
    const ok = (r: { status: number; body: unknown }) => expect(r.status, JSON.stringify(r.body)).toBe(200);
    ok(await call(server, 'POST', `/management/v1/projects/${web.projectId}/roles`, { token: server.pat, body: { roleKey: 'editor', displayName: 'Editor' } }));
    ok(await call(server, 'POST', `/management/v1/users/${person.userId}/grants`, { token: server.pat, body: { projectId: web.projectId, roleKeys: ['editor'] } }));
    ok(await call(server, 'POST', `/management/v1/users/${person.userId}/metadata/team`, { token: server.pat, body: { value: Buffer.from('blue').toString('base64') } }));
    const { tokens, config } = await codeFlow(web, { scope: 'openid urn:zitadel:iam:org:project:role:editor urn:zitadel:iam:user:metadata' });
    const claims = await oidc.fetchUserInfo(config, tokens.access_token, person.userId);
    const roles = claims['urn:zitadel:iam:org:project:roles'] as Record<string, Record<string, string>>;
    expect(Object.keys(roles)).toEqual(['editor']);
    expect(Object.values(roles.editor!)[0]).toMatch(/\.localhost$/);
    expect(claims[`urn:zitadel:iam:org:project:${web.projectId}:roles`]).toEqual(roles);
    expect(claims['urn:zitadel:iam:user:metadata']).toEqual({ team: Buffer.from('blue').toString('base64url') });
    const plain = await codeFlow(web, { scope: 'openid' });
    const without = await oidc.fetchUserInfo(plain.config, plain.tokens.access_token, person.userId);
    expect(without['urn:zitadel:iam:org:project:roles']).toBeUndefined();
  });

  it('answers 401 with a Bearer challenge for a missing, invalid or revoked token', async () => {
    const missing = await fetch(`${server.url}/oidc/v1/userinfo`);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const invalid = await fetch(`${server.url}/oidc/v1/userinfo`, { headers: { authorization: 'Bearer nope' } });
    expect(invalid.status).toBe(401);
    expect(invalid.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    const { tokens, config } = await codeFlow(web, { scope: 'openid' });
    await oidc.tokenRevocation(config, tokens.access_token);
    const revoked = await fetch(`${server.url}/oidc/v1/userinfo`, { method: 'POST', headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(revoked.status).toBe(401);
    expect(revoked.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });
});

describe('sign-out', () => {
  it('ends the session, revokes its tokens, and redirects to a registered post-logout URI with state', async () => {
    const agent = new Agent(server);
    const { tokens, config } = await codeFlow(web, { agent });
    const jwt = await codeFlow(spa, { agent, method: 'none' });
    expect((await introspect(jwt.tokens.access_token)).active).toBe(true);
    const url = oidc.buildEndSessionUrl(config, {
      id_token_hint: tokens.id_token!,
      post_logout_redirect_uri: 'http://localhost:9999/signed-out',
      state: 'bye',
    });
    const res = await agent.fetch(url.pathname + url.search);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('http://localhost:9999/signed-out?state=bye');
    expect(await introspect(tokens.access_token)).toEqual({ active: false });
    expect(await introspect(jwt.tokens.access_token)).toEqual({ active: false });
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    // The browser is signed out: prompt=none now needs a login.
    const silent = await agent.follow(
      `/oauth/v2/authorize?${new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', prompt: 'none', state: 's' })}`,
    );
    expect(responseParams(silent.location!).get('error')).toBe('login_required');
  });
});

describe('app clock skew', () => {
  it('widens the validity of user tokens by the app clockSkew, as ZITADEL does', async () => {
    const skewed = await createWebApp(server, { projectId: web.projectId, accessTokenType: 'OIDC_TOKEN_TYPE_JWT' });
    const set = await (await import('./helpers/api.js')).api(server, 'PUT', `/management/v1/projects/${skewed.projectId}/apps/${skewed.appId}/oidc_config`, {
      token: server.pat,
      body: {
        redirectUris: [REDIRECT],
        responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
        grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
        accessTokenType: 'OIDC_TOKEN_TYPE_JWT',
        clockSkew: '3s',
      },
    });
    expect(set.status).toBe(200);
    const { code, verifier } = await codeOnly(skewed, { scope: 'openid' });
    const res = await tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier }, skewed);
    expect(res.status).toBe(200);
    const tokens = (await res.json()) as { access_token: string; id_token: string; expires_in: number };
    expect(tokens.expires_in).toBe(12 * 3600 + 3);
    const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as { iat: number; exp: number; nbf?: number; auth_time?: number };
    const access = claimsOf(tokens.access_token);
    expect(access.exp - access.iat).toBe(12 * 3600 + 6);
    expect(access.nbf).toBe(access.iat);
    const id = claimsOf(tokens.id_token);
    expect(id.exp - id.iat).toBe(12 * 3600 + 6);
    expect(id.auth_time!).toBeLessThanOrEqual(id.iat + 3);
  });
});
