import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import * as oauth from 'oauth4webapi';
import { decodeJwt } from 'jose';
import { api, createApiApp, createMachineClient } from './helpers/api.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';
import { Agent, createHuman, createWebApp, responseParams, signIn, uniqueName, type Human, type WebApp } from './helpers/oidc.js';

/**
 * Resource indicators (RFC 8707; issue 14): resource URIs registered on projects through the
 * management API; `resource` at the authorization endpoint, PAR and the token endpoint (code,
 * refresh, client_credentials, token exchange) with openid-client and oauth4webapi as clients;
 * the audience they give, introspection by the resource's API app, narrowing, `invalid_target`.
 */
let server: InProcessServer;
let web: WebApp;
let person: Human;
let orders: { projectId: string; clientId: string; clientSecret: string };
let billing: { projectId: string; clientId: string; clientSecret: string };
const REDIRECT = 'http://localhost:9999/callback';
const ORDERS = 'https://orders.example.com/api';
const BILLING = 'https://billing.example.com/';

const INSECURE = { execute: [oidc.allowInsecureRequests] };

async function setResources(projectId: string, name: string, resourceUris: string[], orgId?: string) {
  return api(server, 'PUT', `/management/v1/projects/${projectId}`, { token: server.pat, ...(orgId ? { orgId } : {}), body: { name, resourceUris } });
}

beforeAll(async () => {
  server = await startInProcess();
  web = await createWebApp(server, { accessTokenType: 'OIDC_TOKEN_TYPE_JWT' });
  person = await createHuman(server);
  orders = await createApiApp(server, 'orders');
  billing = await createApiApp(server, 'billing');
  expect((await setResources(orders.projectId, 'orders', [ORDERS])).status).toBe(200);
  expect((await setResources(billing.projectId, 'billing', [BILLING])).status).toBe(200);
});
afterAll(async () => {
  await server?.close();
});

const webConfig = () => oidc.discovery(new URL(server.issuer), web.clientId, web.clientSecret, oidc.ClientSecretBasic(web.clientSecret), INSECURE);
const introspector = (app: { clientId: string; clientSecret: string }) => oidc.discovery(new URL(server.issuer), app.clientId, app.clientSecret, oidc.ClientSecretBasic(app.clientSecret), INSECURE);

/** Signs the person in with `resources` at the authorization endpoint; the redirect back and the PKCE verifier. */
async function authorize(config: oidc.Configuration, resources: string[], extra: Record<string, string> = {}) {
  const verifier = oidc.randomPKCECodeVerifier();
  const params = new URLSearchParams({
    redirect_uri: REDIRECT,
    scope: 'openid offline_access',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: 'st',
    ...extra,
  });
  for (const r of resources) params.append('resource', r);
  const url = oidc.buildAuthorizationUrl(config, params);
  const done = await signIn(new Agent(server), url.pathname + url.search, person);
  return { location: new URL(done.location!), verifier };
}

describe('resource URIs on projects (management API)', () => {
  it('are set with AddProject and UpdateProject, shown by GetProjectByID, and each names one project', async () => {
    const name = uniqueName('inventory');
    const added = await api(server, 'POST', '/management/v1/projects', { token: server.pat, body: { name, resourceUris: ['urn:example:inventory'] } });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    const shown = await api(server, 'GET', `/management/v1/projects/${added.body.id}`, { token: server.pat });
    expect(shown.body.project.resourceUris).toEqual(['urn:example:inventory']);

    // Another project may not register the same URI.
    const taken = await setResources(billing.projectId, 'billing', [BILLING, 'urn:example:inventory']);
    expect(taken.status).toBe(409);
    expect(taken.body.message).toContain('already registered');

    // A change replaces the list; the URI given up is free again.
    expect((await setResources(added.body.id, name, ['urn:example:inventory:v2'])).status).toBe(200);
    expect((await setResources(billing.projectId, 'billing', [BILLING, 'urn:example:inventory'])).status).toBe(200);
    expect((await setResources(billing.projectId, 'billing', [BILLING])).status).toBe(200);
    const updated = await api(server, 'GET', `/management/v1/projects/${added.body.id}`, { token: server.pat });
    expect(updated.body.project).toMatchObject({ name, resourceUris: ['urn:example:inventory:v2'] });

    for (const bad of ['/relative', 'https://api.example.com/#frag', 'not a uri', 'x'.repeat(3000)]) {
      const refused = await setResources(added.body.id, name, [bad]);
      expect(refused.status, bad).toBe(400);
    }
    const twice = await setResources(added.body.id, name, ['urn:a', 'urn:a']);
    expect(twice.status).toBe(400);
    const many = await setResources(
      added.body.id,
      name,
      Array.from({ length: 21 }, (_, i) => `urn:r:${i}`),
    );
    expect(many.status).toBe(400);
  });
});

describe('who may register resource URIs', () => {
  it('takes an instance role: an org owner may manage projects but not claim URIs, which are one namespace for every tenant', async () => {
    const machine = await api(server, 'POST', '/management/v1/users/machine', { token: server.pat, body: { userName: uniqueName('owner'), name: 'owner' } });
    const pat = await api(server, 'POST', `/management/v1/users/${machine.body.userId}/pats`, { token: server.pat, body: {} });
    expect((await api(server, 'POST', '/management/v1/orgs/me/members', { token: server.pat, body: { userId: machine.body.userId, roles: ['ORG_OWNER'] } })).status).toBe(200);
    const claimed = await api(server, 'POST', '/management/v1/projects', { token: pat.body.token, body: { name: uniqueName('squat'), resourceUris: ['https://other-tenant.example.com/api'] } });
    expect(claimed.status).toBe(403);
    const plain = await api(server, 'POST', '/management/v1/projects', { token: pat.body.token, body: { name: uniqueName('plain') } });
    expect(plain.status).toBe(200);
    expect((await api(server, 'PUT', `/management/v1/projects/${plain.body.id}`, { token: pat.body.token, body: { name: 'renamed' } })).status).toBe(200);
    expect((await api(server, 'PUT', `/management/v1/projects/${plain.body.id}`, { token: pat.body.token, body: { name: 'renamed', resourceUris: ['urn:x'] } })).status).toBe(403);
  });
});

describe('resource URIs under concurrent project writes', () => {
  it('the index follows the project as committed, whichever write lands last (race test)', async () => {
    const name = uniqueName('racing');
    const project = await api(server, 'POST', '/management/v1/projects', { token: server.pat, body: { name } });
    const machine = await createMachineClient(server, uniqueName('racer'), 'ACCESS_TOKEN_TYPE_JWT');
    const config = await oidc.discovery(new URL(server.issuer), machine.clientId, machine.clientSecret, oidc.ClientSecretBasic(machine.clientSecret), INSECURE);
    const uris = Array.from({ length: 6 }, (_, i) => `urn:race:${name}:${i}`);
    // Updates with different lists and role additions (whole-row writes of the same project) at once.
    const answers = await Promise.all(
      uris.flatMap((uri, i) => [
        api(server, 'PUT', `/management/v1/projects/${project.body.id}`, { token: server.pat, body: { name, resourceUris: [uri] } }),
        api(server, 'POST', `/management/v1/projects/${project.body.id}/roles`, { token: server.pat, body: { roleKey: `r${i}`, displayName: `R${i}` } }),
      ]),
    );
    // A write that lost the race is refused (FailedPrecondition), never silently overwritten: every role answered 200 is there.
    for (const answer of answers) expect([200, 400], JSON.stringify(answer.body)).toContain(answer.status);
    const roles = (await api(server, 'POST', `/management/v1/projects/${project.body.id}/roles/_search`, { token: server.pat, body: {} })).body.result as { key: string }[];
    answers.forEach((answer, n) => {
      if (n % 2 === 1 && answer.status === 200) expect(roles.map((r) => r.key)).toContain(`r${(n - 1) / 2}`);
    });
    const shown = ((await api(server, 'GET', `/management/v1/projects/${project.body.id}`, { token: server.pat })).body.project.resourceUris ?? []) as string[];
    for (const uri of uris) {
      const outcome = await oidc.clientCredentialsGrant(config, new URLSearchParams({ resource: uri })).then(
        (t) => (decodeJwt(t.access_token).aud as string[]).includes(project.body.id),
        (e: unknown) => (e as oidc.ResponseBodyError).error,
      );
      expect(outcome, uri).toBe(shown.includes(uri) ? true : 'invalid_target');
    }
  });
});

describe('authorization code flow with resources (openid-client)', () => {
  it('names two resources at authorize; the code exchange and refreshes narrow to one each; the resource server introspects', async () => {
    const config = await webConfig();
    const { location, verifier } = await authorize(config, [ORDERS, BILLING]);
    const tokens = await oidc.authorizationCodeGrant(config, location, { pkceCodeVerifier: verifier, expectedState: 'st' }, { resource: ORDERS });
    // Only the orders resource: its URI and project; not the web app's own project, not billing.
    const aud = decodeJwt(tokens.access_token).aud as string[];
    expect(aud).toEqual([web.clientId, ORDERS, orders.projectId]);
    // The ID token is for the client, as without resources.
    expect(tokens.claims()!.aud).toContain(web.clientId);

    expect((await oidc.tokenIntrospection(await introspector(orders), tokens.access_token)).active).toBe(true);
    expect((await oidc.tokenIntrospection(await introspector(billing), tokens.access_token)).active).toBe(false);

    // A refresh may ask for the other resource of the authorization …
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, { resource: BILLING });
    expect(decodeJwt(refreshed.access_token).aud).toEqual([web.clientId, BILLING, billing.projectId]);
    expect((await oidc.tokenIntrospection(await introspector(billing), refreshed.access_token)).active).toBe(true);
    // … or for all of them by naming none …
    const all = await oidc.refreshTokenGrant(config, refreshed.refresh_token!);
    expect(decodeJwt(all.access_token).aud).toEqual([web.clientId, ORDERS, orders.projectId, BILLING, billing.projectId]);
    // … but not for one outside it; the refused request leaves the refresh token usable.
    const outside = await oidc.refreshTokenGrant(config, all.refresh_token!, { resource: 'https://elsewhere.example.com/' }).catch((e: unknown) => e);
    expect(outside).toBeInstanceOf(oidc.ResponseBodyError);
    expect((outside as oidc.ResponseBodyError).error).toBe('invalid_target');
    const still = await oidc.refreshTokenGrant(config, all.refresh_token!, { resource: ORDERS });
    expect(decodeJwt(still.access_token).aud).toEqual([web.clientId, ORDERS, orders.projectId]);
  });

  it("a resource's project has its own checks: a user without a role there gets access_denied", async () => {
    const guarded = await api(server, 'POST', '/management/v1/projects', {
      token: server.pat,
      body: { name: uniqueName('guarded'), projectRoleCheck: true, resourceUris: ['https://guarded.example.com/'] },
    });
    expect(guarded.status).toBe(200);
    const { location } = await authorize(await webConfig(), ['https://guarded.example.com/']);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('code')).toBeNull();
  });

  it('a resource unregistered after the authorization fails its refresh without spending the token', async () => {
    const config = await webConfig();
    const { location, verifier } = await authorize(config, [ORDERS, BILLING]);
    const tokens = await oidc.authorizationCodeGrant(config, location, { pkceCodeVerifier: verifier, expectedState: 'st' });
    expect((await setResources(billing.projectId, 'billing', [])).status).toBe(200);
    try {
      const all = await oidc.refreshTokenGrant(config, tokens.refresh_token!).catch((e: unknown) => e);
      expect((all as oidc.ResponseBodyError).error).toBe('invalid_target');
      // The same refresh token still works for the resource that is still there.
      const orders_ = await oidc.refreshTokenGrant(config, tokens.refresh_token!, { resource: ORDERS });
      expect(decodeJwt(orders_.access_token).aud).toEqual([web.clientId, ORDERS, orders.projectId]);
    } finally {
      expect((await setResources(billing.projectId, 'billing', [BILLING])).status).toBe(200);
    }
  });

  it('refuses at the token endpoint a resource the authorization did not name, and keeps the default audience without resources', async () => {
    const config = await webConfig();
    const first = await authorize(config, [ORDERS]);
    const refused = await oidc.authorizationCodeGrant(config, first.location, { pkceCodeVerifier: first.verifier, expectedState: 'st' }, { resource: BILLING }).catch((e: unknown) => e);
    expect((refused as oidc.ResponseBodyError).error).toBe('invalid_target');

    const plain = await authorize(config, []);
    const tokens = await oidc.authorizationCodeGrant(config, plain.location, { pkceCodeVerifier: plain.verifier, expectedState: 'st' });
    const aud = decodeJwt(tokens.access_token).aud as string[];
    expect(aud).toContain(web.projectId);
    expect(aud).not.toContain(ORDERS);
  });

  it('answers unknown, malformed and foreign resources with invalid_target at the redirect_uri (with iss)', async () => {
    const config = await webConfig();
    const other = await api(server, 'POST', '/management/v1/orgs', { token: server.pat, body: { name: uniqueName('elsewhere') } });
    const foreign = await api(server, 'POST', '/management/v1/projects', { token: server.pat, orgId: other.body.id, body: { name: 'foreign', resourceUris: ['https://foreign.example.com/'] } });
    expect(foreign.status).toBe(200);
    for (const resource of ['https://unknown.example.com/', 'https://orders.example.com/api#x', 'relative/path', 'https://foreign.example.com/']) {
      const params = new URLSearchParams({
        redirect_uri: REDIRECT,
        scope: 'openid',
        state: 'st',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        resource,
      });
      const url = oidc.buildAuthorizationUrl(config, params);
      const answer = await new Agent(server).follow(url.pathname + url.search);
      expect(answer.location, resource).toBeDefined();
      const got = responseParams(answer.location!);
      expect(got.get('error'), resource).toBe('invalid_target');
      expect(got.get('iss')).toBe(server.issuer);
      expect(got.get('state')).toBe('st');
    }
  });

  it('carries pushed resources (PAR, oauth4webapi) into the code', async () => {
    const as = await oauth.processDiscoveryResponse(new URL(server.issuer), await oauth.discoveryRequest(new URL(server.issuer), { algorithm: 'oidc', [oauth.allowInsecureRequests]: true }));
    const client = { client_id: web.clientId };
    const auth = oauth.ClientSecretBasic(web.clientSecret);
    const verifier = oauth.generateRandomCodeVerifier();
    const params = new URLSearchParams({
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid',
      state: 'p',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    params.append('resource', ORDERS);
    params.append('resource', BILLING);
    const pushed = await oauth.processPushedAuthorizationResponse(as, client, await oauth.pushedAuthorizationRequest(as, client, auth, params, { [oauth.allowInsecureRequests]: true }));
    const done = await signIn(new Agent(server), `/oauth/v2/authorize?${new URLSearchParams({ client_id: web.clientId, request_uri: pushed.request_uri })}`, person);
    const callback = oauth.validateAuthResponse(as, client, new URL(done.location!), 'p');
    const response = await oauth.authorizationCodeGrantRequest(as, client, auth, callback, REDIRECT, verifier, { [oauth.allowInsecureRequests]: true });
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
    expect(decodeJwt(tokens.access_token).aud).toEqual([web.clientId, ORDERS, orders.projectId, BILLING, billing.projectId]);

    // A malformed resource is refused at the push, as JSON.
    const bad = new URLSearchParams({
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid',
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      resource: 'https://x.example/#f',
    });
    const refused = await oauth.pushedAuthorizationRequest(as, client, auth, bad, { [oauth.allowInsecureRequests]: true });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe('invalid_target');
  });
});

describe('device authorization with resources', () => {
  it('checks the resources when the device starts', async () => {
    const tv = await createWebApp(server, {
      appType: 'OIDC_APP_TYPE_NATIVE',
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
      redirectUris: ['http://127.0.0.1/callback'],
      grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_DEVICE_CODE'],
    });
    const start = (resource: string) =>
      fetch(`${server.url}/oauth/v2/device_authorization`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: tv.clientId, scope: 'openid', resource }),
      });
    expect((await start(ORDERS)).status).toBe(200);
    const refused = await start('https://unknown.example.com/');
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: string }).error).toBe('invalid_target');
  });
});

describe('client_credentials and token exchange with resources', () => {
  it('gives a machine user a token for the resources it names, and refuses unknown ones', async () => {
    const machine = await createMachineClient(server, uniqueName('svc'), 'ACCESS_TOKEN_TYPE_JWT');
    const config = await oidc.discovery(new URL(server.issuer), machine.clientId, machine.clientSecret, oidc.ClientSecretBasic(machine.clientSecret), INSECURE);
    const one = await oidc.clientCredentialsGrant(config, new URLSearchParams({ scope: 'openid', resource: ORDERS }));
    expect(decodeJwt(one.access_token).aud).toEqual([ORDERS, orders.projectId]);
    expect((await oidc.tokenIntrospection(await introspector(orders), one.access_token)).active).toBe(true);

    const two = new URLSearchParams({ scope: 'openid' });
    two.append('resource', ORDERS);
    two.append('resource', BILLING);
    expect(decodeJwt((await oidc.clientCredentialsGrant(config, two)).access_token).aud).toEqual([ORDERS, orders.projectId, BILLING, billing.projectId]);

    // ZITADEL's `:aud` scope keeps adding its project beside the resources.
    const withScope = await oidc.clientCredentialsGrant(config, new URLSearchParams({ scope: `urn:zitadel:iam:org:project:id:${billing.projectId}:aud`, resource: ORDERS }));
    expect(decodeJwt(withScope.access_token).aud).toEqual([ORDERS, orders.projectId, billing.projectId]);

    for (const resource of ['https://unknown.example.com/', 'urn:x#y', 'relative']) {
      const refused = await oidc.clientCredentialsGrant(config, new URLSearchParams({ resource })).catch((e: unknown) => e);
      expect((refused as oidc.ResponseBodyError).error, resource).toBe('invalid_target');
    }
    const tooMany = new URLSearchParams();
    for (let i = 0; i < 11; i++) tooMany.append('resource', `urn:r:${i}`);
    expect(((await oidc.clientCredentialsGrant(config, tooMany).catch((e: unknown) => e)) as oidc.ResponseBodyError).error).toBe('invalid_target');
  });

  it('repeated parameters other than resource stay errors', async () => {
    const machine = await createMachineClient(server, uniqueName('svc'));
    const body = `grant_type=client_credentials&scope=openid&scope=profile`;
    const res = await fetch(`${server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${machine.clientId}:${machine.clientSecret}`).toString('base64')}` },
      body,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe('invalid_request');
  });

  it('token exchange narrows a token to a resource within its audience', async () => {
    const enabled = await api(server, 'PUT', '/v2/features/instance', { token: server.pat, body: { oidcTokenExchange: true } });
    expect(enabled.status).toBe(200);
    const exchanger = await createWebApp(server, { accessTokenType: 'OIDC_TOKEN_TYPE_JWT', grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_TOKEN_EXCHANGE'] });
    const config = await oidc.discovery(new URL(server.issuer), exchanger.clientId, exchanger.clientSecret, oidc.ClientSecretBasic(exchanger.clientSecret), INSECURE);
    const { location, verifier } = await authorize(config, [ORDERS, BILLING], { scope: 'openid' });
    const tokens = await oidc.authorizationCodeGrant(config, location, { pkceCodeVerifier: verifier, expectedState: 'st' });
    const exchange = (resource: string) =>
      oidc.genericGrantRequest(config, 'urn:ietf:params:oauth:grant-type:token-exchange', {
        subject_token: tokens.access_token,
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        requested_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        resource,
      });
    expect(decodeJwt((await exchange(BILLING)).access_token).aud).toEqual([BILLING, billing.projectId]);
    expect(((await exchange('https://unknown.example.com/').catch((e: unknown) => e)) as oidc.ResponseBodyError).error).toBe('invalid_target');
    await api(server, 'PUT', '/v2/features/instance', { token: server.pat, body: { oidcTokenExchange: false } });
  });
});

describe('export and import', () => {
  it("carry a project's resource URIs", async () => {
    const org = await api(server, 'POST', '/management/v1/orgs', { token: server.pat, body: { name: uniqueName('moving') } });
    const project = await api(server, 'POST', '/management/v1/projects', { token: server.pat, orgId: org.body.id, body: { name: 'moving', resourceUris: ['https://moving.example.com/'] } });
    expect(project.status).toBe(200);
    const exported = await api(server, 'POST', '/admin/v1/export', { token: server.pat, body: { orgIds: [org.body.id], timeout: '1m' } });
    expect(exported.body.orgs[0].projects[0].project.resourceUris).toEqual(['https://moving.example.com/']);
    const target = await startInProcess();
    try {
      const imported = await api(target, 'POST', '/admin/v1/import', { token: target.pat, body: { timeout: '1m', dataOrgs: { orgs: exported.body.orgs } } });
      expect(imported.status, JSON.stringify(imported.body)).toBe(200);
      const shown = await api(target, 'GET', `/management/v1/projects/${project.body.id}`, { token: target.pat, orgId: org.body.id });
      expect(shown.body.project.resourceUris).toEqual(['https://moving.example.com/']);
    } finally {
      await target.close();
    }
  });
});

describe('feature off', () => {
  it('SESAME_FEATURE_RESOURCE_INDICATORS=false refuses resource instead of ignoring it', async () => {
    const off = await startInProcess({ env: { SESAME_FEATURE_RESOURCE_INDICATORS: 'false' } });
    try {
      const machine = await createMachineClient(off, uniqueName('svc'));
      const config = await oidc.discovery(new URL(off.issuer), machine.clientId, machine.clientSecret, oidc.ClientSecretBasic(machine.clientSecret), INSECURE);
      const refused = await oidc.clientCredentialsGrant(config, new URLSearchParams({ resource: 'https://orders.example.com/api' })).catch((e: unknown) => e);
      expect((refused as oidc.ResponseBodyError).error).toBe('invalid_target');
      expect((refused as oidc.ResponseBodyError).error_description).toContain('turned off');
      // Without a resource, nothing changes.
      expect((await oidc.clientCredentialsGrant(config, new URLSearchParams({ scope: 'openid' }))).access_token).toBeTruthy();
    } finally {
      await off.close();
    }
  });
});
