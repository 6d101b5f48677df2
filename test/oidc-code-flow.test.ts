import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { createApiApp } from './helpers/api.js';
import { Agent, createHuman, createWebApp, responseParams, signIn, submit, type Human, type WebApp } from './helpers/oidc.js';
import { startServer, type TestServer } from './helpers/server.js';

/**
 * The authorization code flow against a real relying-party library (openid-client): PKCE, the
 * ID token, code replay, redirect_uri and verifier checks, refresh rotation and reuse detection,
 * userinfo per scope, revocation and the state after sign-out.
 */
let server: TestServer;
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
async function codeFlow(
  app: WebApp,
  options: { scope?: string; method?: 'basic' | 'post' | 'none'; agent?: Agent; extra?: Record<string, string> } = {},
) {
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
      authorization: 'Basic ' + Buffer.from(`${resource.clientId}:${resource.clientSecret}`).toString('base64'),
    },
    body: new URLSearchParams({ token }).toString(),
  });
  return (await res.json()) as Record<string, unknown>;
};

beforeAll(async () => {
  server = await startServer();
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
