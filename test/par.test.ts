import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oauth from 'oauth4webapi';
import { api } from './helpers/api.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { Agent, createHuman, createWebApp, signIn, type Human, type WebApp } from './helpers/oidc.js';

/**
 * Pushed authorization requests (RFC 9126; issue 14) with oauth4webapi as the client: the push,
 * the sign-in from `request_uri`, RFC 9207's `iss` and the code exchange; single use, expiry and
 * binding to the client; errors at the push; apps that require it; and the feature off.
 */
let server: InProcessServer;
const clock = new TestClock();
let web: WebApp;
let person: Human;
let as: oauth.AuthorizationServer;
const REDIRECT = 'http://localhost:9999/callback';

beforeAll(async () => {
  server = await startInProcess({ clock });
  web = await createWebApp(server);
  person = await createHuman(server);
  as = await oauth.processDiscoveryResponse(new URL(server.issuer), await oauth.discoveryRequest(new URL(server.issuer), { algorithm: 'oidc', [oauth.allowInsecureRequests]: true }));
});
afterAll(async () => {
  await server?.close();
});

const INSECURE = { [oauth.allowInsecureRequests]: true } as const;

/** Pushes an authorization request as `app` (client_secret_basic); the parsed answer or the error. */
async function push(app: WebApp, params: Record<string, string>, auth: oauth.ClientAuth = oauth.ClientSecretBasic(app.clientSecret)) {
  const res = await oauth.pushedAuthorizationRequest(as, { client_id: app.clientId }, auth, new URLSearchParams(params), INSECURE);
  try {
    return { ok: true as const, status: res.status, body: await oauth.processPushedAuthorizationResponse(as, { client_id: app.clientId }, res) };
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError) return { ok: false as const, status: error.status, error: error.error, description: error.error_description };
    // 401 with `WWW-Authenticate: Basic`: the challenge, then the body's error.
    if (error instanceof oauth.WWWAuthenticateChallengeError) {
      const body = (await error.response.json()) as { error: string; error_description: string };
      return { ok: false as const, status: error.status, error: body.error, description: body.error_description };
    }
    throw error;
  }
}

const authorizeWith = (app: WebApp, requestUri: string, extra: Record<string, string> = {}) =>
  `/oauth/v2/authorize?${new URLSearchParams({ client_id: app.clientId, request_uri: requestUri, ...extra })}`;

describe('pushed authorization requests', () => {
  it('oauth4webapi: push, sign in from the request_uri, check iss and state, exchange the code with PKCE', async () => {
    expect(as.pushed_authorization_request_endpoint).toBe(`${server.issuer}/oauth/v2/par`);
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const pushed = await push(web, {
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid profile',
      state,
      nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    if (!pushed.ok) throw new Error(`push: ${pushed.error} ${pushed.description}`);
    expect(pushed.status).toBe(201);
    expect(pushed.body.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/);
    expect(pushed.body.expires_in).toBe(60);

    // Parameters in the query besides client_id and request_uri do not count (only the pushed ones).
    const done = await signIn(new Agent(server), authorizeWith(web, pushed.body.request_uri, { scope: 'openid email', state: 'other' }), person);
    const params = oauth.validateAuthResponse(as, { client_id: web.clientId }, new URL(done.location!), state);
    const response = await oauth.authorizationCodeGrantRequest(as, { client_id: web.clientId }, oauth.ClientSecretBasic(web.clientSecret), params, REDIRECT, verifier, INSECURE);
    const tokens = await oauth.processAuthorizationCodeResponse(as, { client_id: web.clientId }, response, { expectedNonce: nonce, requireIdToken: true });
    expect(tokens.scope).toBe('openid profile');
    expect(oauth.getValidatedIdTokenClaims(tokens)!.sub).toBe(person.userId);

    // Used once.
    const again = await new Agent(server).follow(authorizeWith(web, pushed.body.request_uri));
    expect(again.status).toBe(400);
    expect(again.html).toContain('already used');
  });

  it('binds the request_uri to its client: another client gets a page and does not spend it', async () => {
    const other = await createWebApp(server, { projectId: web.projectId });
    const pushed = await push(web, { redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 's' });
    if (!pushed.ok) throw new Error(pushed.error);
    const foreign = await new Agent(server).follow(authorizeWith(other, pushed.body.request_uri));
    expect(foreign.status).toBe(400);
    const own = await new Agent(server).follow(authorizeWith(web, pushed.body.request_uri));
    expect(own.status).toBe(200);
    expect(own.html).toContain('action="/ui/login/loginname"');
    const noClient = await fetch(`${server.url}/oauth/v2/authorize?request_uri=${encodeURIComponent(pushed.body.request_uri)}`);
    expect(noClient.status).toBe(400);
  });

  it('validates at the push as the authorization endpoint would, answering JSON errors', async () => {
    const bad = (params: Record<string, string>) => push(web, { redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', ...params });
    expect(await bad({ redirect_uri: 'https://attacker.example/cb' })).toMatchObject({ ok: false, status: 400, error: 'invalid_request' });
    expect(await bad({ response_type: 'token' })).toMatchObject({ ok: false, status: 400, error: 'unsupported_response_type' });
    expect(await bad({ scope: 'profile' })).toMatchObject({ ok: false, status: 400, error: 'invalid_scope' });
    expect(await bad({ code_challenge: 'short', code_challenge_method: 'S256' })).toMatchObject({ ok: false, error: 'invalid_request' });
    expect(await bad({ request_uri: 'urn:ietf:params:oauth:request_uri:x' })).toMatchObject({ ok: false, error: 'invalid_request' });
    expect(await bad({ request: 'eyJhbGciOiJub25lIn0.e30.' })).toMatchObject({ ok: false, error: 'request_not_supported' });
    expect(await push(web, { redirect_uri: REDIRECT, response_type: 'code', scope: 'openid' }, oauth.ClientSecretBasic('wrong'))).toMatchObject({ ok: false, status: 401, error: 'invalid_client' });
    // A public client pushes with client_id alone (and PKCE, as at the authorization endpoint).
    const spa = await createWebApp(server, { projectId: web.projectId, authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE', appType: 'OIDC_APP_TYPE_NATIVE' });
    expect(await push(spa, { redirect_uri: REDIRECT, response_type: 'code', scope: 'openid' }, oauth.None())).toMatchObject({ ok: false, error: 'invalid_request' });
    const verifier = oauth.generateRandomCodeVerifier();
    const pkce = { code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' };
    expect(await push(spa, { redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', ...pkce }, oauth.None())).toMatchObject({ ok: true, status: 201 });
  });

  it('an app with requirePushedAuthorizationRequests signs in only through a push; the setting is shown and exported', async () => {
    const strict = await createWebApp(server, { projectId: web.projectId, requirePushedAuthorizationRequests: true });
    const shown = await api(server, 'GET', `/management/v1/projects/${strict.projectId}/apps/${strict.appId}`, { token: server.pat });
    expect(shown.body.app.oidcConfig.requirePushedAuthorizationRequests).toBe(true);
    const plain = await fetch(`${server.url}/oauth/v2/authorize?${new URLSearchParams({ client_id: strict.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 's' })}`, {
      redirect: 'manual',
    });
    expect(plain.status).toBe(302);
    const refused = new URL(plain.headers.get('location')!);
    expect(refused.searchParams.get('error')).toBe('invalid_request');
    expect(refused.searchParams.get('error_description')).toMatch(/push/);
    const pushed = await push(strict, { redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 's' });
    if (!pushed.ok) throw new Error(pushed.error);
    const done = await signIn(new Agent(server), authorizeWith(strict, pushed.body.request_uri), person);
    expect(new URL(done.location!).searchParams.get('code')).toBeTruthy();

    const exported = await api(server, 'POST', '/admin/v1/export', { token: server.pat, body: { org_ids: [], with_passwords: false, with_otp: false } });
    const apps = (exported.body.orgs as { oidcApps?: { appId: string; app: Record<string, unknown> }[] }[]).flatMap((o) => o.oidcApps ?? []);
    expect(apps.find((a) => a.appId === strict.appId)?.app.requirePushedAuthorizationRequests).toBe(true);
  });

  it('a request_uri lives 60 seconds', async () => {
    const pushed = await push(web, { redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 's' });
    if (!pushed.ok) throw new Error(pushed.error);
    clock.advance(60_000);
    const expired = await new Agent(server).follow(authorizeWith(web, pushed.body.request_uri));
    expect(expired.status).toBe(400);
    expect(expired.html).toContain('expired');
  });
});

describe('pushed authorization requests off', () => {
  it('SESAME_FEATURE_PAR=false: no endpoint, not in discovery, request_uri refused', async () => {
    const off = await startInProcess({ env: { SESAME_FEATURE_PAR: 'false' } });
    try {
      const doc = (await (await fetch(`${off.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      expect(doc).not.toHaveProperty('pushed_authorization_request_endpoint');
      const res = await fetch(`${off.url}/oauth/v2/par`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'client_id=x' });
      expect(res.status).toBe(404);
      const app = await createWebApp(off);
      const refused = await fetch(
        `${off.url}/oauth/v2/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', request_uri: 'urn:ietf:params:oauth:request_uri:x' })}`,
        { redirect: 'manual' },
      );
      expect(new URL(refused.headers.get('location')!).searchParams.get('error')).toBe('request_uri_not_supported');
      // An app may not require what this server does not do: it could never sign anyone in.
      await expect(createWebApp(off, { requirePushedAuthorizationRequests: true })).rejects.toThrow(/pushed authorization requests are turned off/);
    } finally {
      await off.close();
    }
  });
});
