import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { decodeJwt } from 'jose';
import { api, createMachineClient, importOrgs } from './helpers/api.js';
import { Agent, createHuman, createWebApp, signIn, uniqueName, type Human, type WebApp } from './helpers/oidc.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';
import { tempDataDir } from './helpers/server.js';

/**
 * Issue 9 "Trust": introspection carries ZITADEL's URN claims with roles of the introspecting
 * app's project, RFC 7662's required `token`, PAT list/get/remove, `openid` kept by
 * client_credentials for a later exchange, logged client authentication failures, and the OIDC app
 * settings that must be enforced (accessTokenRoleAssertion) or refused.
 */
let server: InProcessServer;
let projectP: string;
let projectQ: string;
let web: WebApp;
let webJwt: WebApp;
let webJwtNoRoles: WebApp;
let person: Human;
let introspectorP: { clientId: string; clientSecret: string };
let introspectorQ: { clientId: string; clientSecret: string };
let machineOpaque: { userId: string; clientId: string; clientSecret: string };
let machineJwt: { userId: string; clientId: string; clientSecret: string };
const REDIRECT = 'http://localhost:9999/callback';
const FORM = 'application/x-www-form-urlencoded';
const audScope = (projectId: string) => `urn:zitadel:iam:org:project:id:${projectId}:aud`;
const basic = (c: { clientId: string; clientSecret: string }) => `Basic ${Buffer.from(`${encodeURIComponent(c.clientId)}:${encodeURIComponent(c.clientSecret)}`).toString('base64')}`;

function ok<T extends { status: number; body: any }>(res: T): T['body'] {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function post(path: string, body: Record<string, string>, auth?: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': FORM, ...(auth ? { authorization: auth } : {}), ...headers },
    body: new URLSearchParams(body).toString(),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, any>, headers: res.headers };
}

const introspect = (token: string, caller: { clientId: string; clientSecret: string }) => post('/oauth/v2/introspect', { token }, basic(caller));

async function codeFlow(app: WebApp, scope: string) {
  const config = await oidc.discovery(new URL(server.issuer), app.clientId, app.clientSecret, oidc.ClientSecretBasic(app.clientSecret), {
    execute: [oidc.allowInsecureRequests],
  });
  const verifier = oidc.randomPKCECodeVerifier();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const done = await signIn(new Agent(server), url.pathname + url.search, person);
  expect(done.location, done.html).toBeDefined();
  return oidc.authorizationCodeGrant(config, new URL(done.location!), { pkceCodeVerifier: verifier });
}

async function apiApp(projectId: string) {
  const body = ok(
    await api(server, 'POST', `/management/v1/projects/${projectId}/apps/api`, {
      token: server.pat,
      body: { name: uniqueName('introspector'), authMethodType: 'API_AUTH_METHOD_TYPE_BASIC' },
    }),
  );
  return { clientId: body.clientId as string, clientSecret: body.clientSecret as string };
}

async function grant(userId: string, projectId: string, roleKeys: string[]) {
  ok(await api(server, 'POST', `/management/v1/users/${userId}/grants`, { token: server.pat, body: { projectId, roleKeys } }));
}

async function setMetadata(userId: string, key: string, value: string) {
  ok(await api(server, 'POST', `/management/v1/users/${userId}/metadata/${key}`, { token: server.pat, body: { value: Buffer.from(value).toString('base64') } }));
}

beforeAll(async () => {
  server = await startInProcess();
  projectP = ok(await api(server, 'POST', '/management/v1/projects', { token: server.pat, body: { name: 'trust-p' } })).id;
  projectQ = ok(await api(server, 'POST', '/management/v1/projects', { token: server.pat, body: { name: 'trust-q' } })).id;
  for (const [projectId, roleKey] of [
    [projectP, 'editor'],
    [projectP, 'viewer'],
    [projectQ, 'admin'],
  ] as const) {
    ok(await api(server, 'POST', `/management/v1/projects/${projectId}/roles`, { token: server.pat, body: { roleKey, displayName: roleKey } }));
  }
  web = await createWebApp(server, { projectId: projectP, grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_TOKEN_EXCHANGE'] });
  webJwt = await createWebApp(server, { projectId: projectP, accessTokenType: 'OIDC_TOKEN_TYPE_JWT', accessTokenRoleAssertion: true });
  webJwtNoRoles = await createWebApp(server, { projectId: projectP, accessTokenType: 'OIDC_TOKEN_TYPE_JWT' });
  introspectorP = await apiApp(projectP);
  introspectorQ = await apiApp(projectQ);
  person = await createHuman(server);
  await grant(person.userId, projectP, ['editor']);
  await grant(person.userId, projectQ, ['admin']);
  await setMetadata(person.userId, 'team', 'blue');
  machineOpaque = await createMachineClient(server, uniqueName('svc'));
  machineJwt = await createMachineClient(server, uniqueName('svc'), 'ACCESS_TOKEN_TYPE_JWT');
  for (const machine of [machineOpaque, machineJwt]) {
    await grant(machine.userId, projectP, ['viewer']);
    await setMetadata(machine.userId, 'tier', 'gold');
  }
});

afterAll(async () => {
  await server?.close();
});

const URN_SCOPES = 'urn:zitadel:iam:user:metadata urn:zitadel:iam:user:resourceowner urn:zitadel:iam:org:projects:roles';

describe('introspection claims (compat §5)', () => {
  it("carries a user token's scope claims and URN claims, with roles of the introspecting app's project only", async () => {
    for (const app of [web, webJwt]) {
      const tokens = await codeFlow(app, `openid profile email ${URN_SCOPES} ${audScope(projectQ)}`);
      const byP = await introspect(tokens.access_token, introspectorP);
      expect(byP.status).toBe(200);
      expect(byP.body).toMatchObject({
        active: true,
        sub: person.userId,
        username: person.loginName,
        email: `${person.userName}@example.com`,
        email_verified: true,
        given_name: 'Ada',
        'urn:zitadel:iam:user:metadata': { team: Buffer.from('blue').toString('base64url') },
        'urn:zitadel:iam:user:resourceowner:id': expect.any(String),
        'urn:zitadel:iam:user:resourceowner:name': expect.any(String),
        'urn:zitadel:iam:user:resourceowner:primary_domain': expect.any(String),
      });
      const rolesP = byP.body['urn:zitadel:iam:org:project:roles'];
      expect(Object.keys(rolesP)).toEqual(['editor']);
      expect(byP.body[`urn:zitadel:iam:org:project:${projectP}:roles`]).toEqual(rolesP);
      expect(byP.body).not.toHaveProperty([`urn:zitadel:iam:org:project:${projectQ}:roles`]);
      // The same token, introspected by the other project's API (it is in the audience): its roles.
      const byQ = await introspect(tokens.access_token, introspectorQ);
      expect(byQ.body.active).toBe(true);
      expect(Object.keys(byQ.body['urn:zitadel:iam:org:project:roles'])).toEqual(['admin']);
      expect(byQ.body[`urn:zitadel:iam:org:project:${projectQ}:roles`]).toEqual(byQ.body['urn:zitadel:iam:org:project:roles']);
    }
  });

  it('carries only what the granted scope asks for', async () => {
    const tokens = await codeFlow(web, 'openid');
    const res = await introspect(tokens.access_token, introspectorP);
    expect(res.body.active).toBe(true);
    for (const claim of ['email', 'name', 'urn:zitadel:iam:user:metadata', 'urn:zitadel:iam:user:resourceowner:id', 'urn:zitadel:iam:org:project:roles']) {
      expect(res.body).not.toHaveProperty([claim]);
    }
  });

  it('carries the URN claims of machine tokens, opaque and JWT', async () => {
    for (const machine of [machineOpaque, machineJwt]) {
      const token = await post('/oauth/v2/token', { grant_type: 'client_credentials', scope: `profile ${URN_SCOPES} ${audScope(projectP)}` }, basic(machine));
      expect(token.status).toBe(200);
      const res = await introspect(token.body.access_token, introspectorP);
      expect(res.body).toMatchObject({
        active: true,
        sub: machine.userId,
        preferred_username: machine.clientId,
        'urn:zitadel:iam:user:metadata': { tier: Buffer.from('gold').toString('base64url') },
        'urn:zitadel:iam:user:resourceowner:id': expect.any(String),
        'urn:zitadel:iam:org:project:roles': { viewer: expect.any(Object) },
        [`urn:zitadel:iam:org:project:${projectP}:roles`]: { viewer: expect.any(Object) },
      });
    }
  });

  it('answers 400 invalid_request when the token parameter is missing (RFC 7662 §2.1)', async () => {
    for (const body of [{}, { token: '' }] as Record<string, string>[]) {
      const res = await post('/oauth/v2/introspect', body, basic(introspectorP));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: 'invalid_request' });
    }
  });
});

describe('JWT access token role assertion', () => {
  it('carries role claims only when the app sets accessTokenRoleAssertion', async () => {
    const scope = 'openid urn:zitadel:iam:org:project:role:editor';
    const asserted = decodeJwt((await codeFlow(webJwt, scope)).access_token);
    expect(Object.keys(asserted['urn:zitadel:iam:org:project:roles'] as object)).toEqual(['editor']);
    expect(asserted[`urn:zitadel:iam:org:project:${projectP}:roles`]).toEqual(asserted['urn:zitadel:iam:org:project:roles']);
    const plain = decodeJwt((await codeFlow(webJwtNoRoles, scope)).access_token);
    expect(plain).not.toHaveProperty(['urn:zitadel:iam:org:project:roles']);
    // Never profile or email claims in an access token (compat §3.3).
    const profile = decodeJwt((await codeFlow(webJwt, 'openid profile email')).access_token);
    expect(profile).not.toHaveProperty(['email']);
    expect(profile).not.toHaveProperty(['name']);
  });
});

describe('client_credentials with openid', () => {
  it('keeps openid in the granted scope (no ID token), so a token exchange can return an ID token', async () => {
    ok(await api(server, 'PUT', '/v2/features/instance', { token: server.pat, body: { oidcTokenExchange: true } }));
    const cc = await post('/oauth/v2/token', { grant_type: 'client_credentials', scope: `openid offline_access ${audScope(projectP)}` }, basic(machineOpaque));
    expect(cc.status).toBe(200);
    expect(cc.body.scope).toBe(`openid ${audScope(projectP)}`);
    expect(cc.body.id_token).toBeUndefined();
    expect(cc.body.refresh_token).toBeUndefined();
    const exchanged = await post(
      '/oauth/v2/token',
      {
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token: cc.body.access_token,
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        scope: 'openid',
      },
      basic(web),
    );
    expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200);
    expect(typeof exchanged.body.id_token).toBe('string');
    expect(decodeJwt(exchanged.body.id_token).sub).toBe(machineOpaque.userId);
  });
});

describe('failed client authentication', () => {
  const warnings = () =>
    server
      .logs()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((e) => e.msg === 'client authentication failed');

  it('is logged at warn with client_id, method, endpoint and reason, never the secret or assertion', async () => {
    const secret = `Wrong-Secret-${uniqueName('s')}`;
    const res = await post('/oauth/v2/token', { grant_type: 'client_credentials' }, basic({ clientId: machineOpaque.clientId, clientSecret: secret }));
    expect(res.status).toBe(401);
    const assertion = `eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJ4In0.${uniqueName('sig')}`;
    const viaAssertion = await post('/oauth/v2/introspect', {
      token: 'x',
      client_id: introspectorP.clientId,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
    });
    expect(viaAssertion.status).toBe(401);
    const unknown = await post('/oauth/v2/revoke', { token: 'x', client_id: `nobody-${uniqueName('c')}`, client_secret: secret });
    expect(unknown.status).toBe(401);

    const logged = warnings();
    expect(logged).toContainEqual(
      expect.objectContaining({ level: 'warn', client_id: machineOpaque.clientId, method: 'client_secret_basic', endpoint: '/oauth/v2/token', reason: 'wrong client secret' }),
    );
    expect(logged).toContainEqual(
      expect.objectContaining({ level: 'warn', client_id: introspectorP.clientId, method: 'private_key_jwt', endpoint: '/oauth/v2/introspect', reason: expect.stringMatching(/^client assertion: /) }),
    );
    expect(logged).toContainEqual(expect.objectContaining({ method: 'client_secret_post', endpoint: '/oauth/v2/revoke', reason: 'unknown client' }));
    expect(server.logs()).not.toContain(secret);
    expect(server.logs()).not.toContain(assertion.split('.')[2]);
  });
});

describe('introspection of personal access tokens', () => {
  it('answers active for the introspecting app, with the roles of its project (compat §5); inactive once removed', async () => {
    const pat = ok(await api(server, 'POST', `/management/v1/users/${machineOpaque.userId}/pats`, { token: server.pat, body: {} }));
    const seenByP = ok(await introspect(pat.token, introspectorP));
    expect(seenByP).toMatchObject({ active: true, sub: machineOpaque.userId, jti: pat.tokenId, token_type: 'Bearer', iss: server.issuer });
    expect(seenByP.aud).toEqual([introspectorP.clientId, projectP]);
    expect(seenByP.scope.split(' ')).toEqual(expect.arrayContaining(['openid', 'urn:zitadel:iam:org:project:role:editor', 'urn:zitadel:iam:org:project:role:viewer']));
    expect(Object.keys(seenByP['urn:zitadel:iam:org:project:roles'])).toEqual(['viewer']);
    expect(seenByP['urn:zitadel:iam:user:metadata']).toEqual({ tier: Buffer.from('gold').toString('base64url') });
    const seenByQ = ok(await introspect(pat.token, introspectorQ));
    expect(seenByQ.active).toBe(true);
    expect(seenByQ['urn:zitadel:iam:org:project:roles']).toBeUndefined();
    ok(await api(server, 'DELETE', `/management/v1/users/${machineOpaque.userId}/pats/${pat.tokenId}`, { token: server.pat }));
    expect(ok(await introspect(pat.token, introspectorP))).toEqual({ active: false });
  });
});

describe('personal access tokens', () => {
  it('lists, reads and removes PATs; a removed PAT stops authenticating at once and after a restart', async () => {
    const dataDir = tempDataDir();
    let own = await startInProcess({ dataDir });
    try {
      const call = (method: string, path: string, token: string, body?: unknown) => api(own, method, `/management/v1${path}`, { token, body });
      const machine = (await call('POST', '/users/machine', own.pat, { userName: 'pat-holder', name: 'PAT holder' })).body.userId as string;
      expect((await call('POST', '/orgs/me/members', own.pat, { userId: machine, roles: ['ORG_OWNER'] })).status).toBe(200);
      const first = (await call('POST', `/users/${machine}/pats`, own.pat, {})).body;
      const second = (await call('POST', `/users/${machine}/pats`, own.pat, { expirationDate: '2099-01-01T00:00:00Z' })).body;
      const whoAmI = (token: string) => call('GET', `/users/${machine}`, token);
      expect((await whoAmI(first.token)).status).toBe(200);

      const listed = await call('POST', `/users/${machine}/pats/_search`, own.pat, {});
      expect(listed.status).toBe(200);
      expect(listed.body.details.totalResult).toBe('2');
      expect(listed.body.result.map((p: { id: string }) => p.id)).toEqual([first.tokenId, second.tokenId]);
      expect(listed.body.result[1]).toEqual({ id: second.tokenId, details: expect.objectContaining({ sequence: expect.any(String) }), expirationDate: '2099-01-01T00:00:00Z' });
      expect(JSON.stringify(listed.body)).not.toContain(first.token);
      const one = await call('GET', `/users/${machine}/pats/${second.tokenId}`, own.pat);
      expect(one.body).toEqual({ token: listed.body.result[1] });

      const removed = await call('DELETE', `/users/${machine}/pats/${first.tokenId}`, own.pat);
      expect(removed.status).toBe(200);
      expect(removed.body.details).toMatchObject({ changeDate: expect.any(String), resourceOwner: expect.any(String) });
      expect((await whoAmI(first.token)).status).toBe(401);
      expect((await whoAmI(second.token)).status).toBe(200);
      expect((await call('GET', `/users/${machine}/pats/${first.tokenId}`, own.pat)).status).toBe(404);
      const again = await call('DELETE', `/users/${machine}/pats/${first.tokenId}`, own.pat);
      expect(again.status).toBe(404);
      expect(again.body).toMatchObject({ code: 5, message: expect.any(String) });

      await own.close({ keepData: true });
      own = await startInProcess({ dataDir });
      expect((await whoAmI(first.token)).status).toBe(401);
      expect((await whoAmI(second.token)).status).toBe(200);
      expect((await call('POST', `/users/${machine}/pats/_search`, own.pat, {})).body.details.totalResult).toBe('1');
    } finally {
      await own.close();
      (await import('node:fs')).rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('OIDC app settings Sesame cannot honour', () => {
  const expectRefused = (res: { status: number; body: any }, message: RegExp) => {
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body).toMatchObject({ code: 3, message: expect.stringMatching(message), details: expect.any(Array) });
  };
  const base = { redirectUris: ['https://refused.example.com/cb'] };

  it('refuses loginV2 and a back-channel logout URI that is not https (http only in dev mode) at AddOIDCApp and UpdateOIDCAppConfig; loginV1 is fine', async () => {
    const add = (body: Record<string, unknown>) => api(server, 'POST', `/management/v1/projects/${projectP}/apps/oidc`, { token: server.pat, body: { name: uniqueName('app'), ...base, ...body } });
    expectRefused(await add({ backChannelLogoutUri: 'http://refused.example.com/bcl' }), /backChannelLogoutUri: .* uses http, which is allowed only in dev mode/);
    expectRefused(await add({ backChannelLogoutUri: 'ftp://refused.example.com/bcl', devMode: true }), /not an absolute http\(s\) URL/);
    expectRefused(await add({ backChannelLogoutUri: '/bcl' }), /not an absolute http\(s\) URL/);
    expectRefused(await add({ backChannelLogoutUri: 'https://refused.example.com/bcl#frag' }), /must not have a fragment/);
    expectRefused(await add({ backChannelLogoutUri: 'https://user:pw@refused.example.com/bcl' }), /must not carry credentials/);
    expectRefused(await add({ loginVersion: { loginV2: { baseUri: 'https://login.example.com' } } }), /loginV2 is not supported/);
    expectRefused(await add({ loginVersion: { loginV2: {} } }), /loginV2 is not supported/);
    const v1 = ok(await add({ loginVersion: { loginV1: {} } }));
    const path = `/management/v1/projects/${projectP}/apps/${v1.appId}/oidc_config`;
    expectRefused(await api(server, 'PUT', path, { token: server.pat, body: { ...base, backChannelLogoutUri: 'http://refused.example.com/bcl' } }), /backChannelLogoutUri/);
    expectRefused(await api(server, 'PUT', path, { token: server.pat, body: { ...base, loginVersion: { loginV2: {} } } }), /loginV2/);
    const stored = ok(await api(server, 'GET', `/management/v1/projects/${projectP}/apps/${v1.appId}`, { token: server.pat })).app.oidcConfig;
    expect(stored).toMatchObject({ loginVersion: { loginV1: {} } });
    expect(stored).not.toHaveProperty(['backChannelLogoutUri']);
  });

  it('stores an https back-channel logout URI, and an http one in dev mode', async () => {
    const add = (body: Record<string, unknown>) => api(server, 'POST', `/management/v1/projects/${projectP}/apps/oidc`, { token: server.pat, body: { name: uniqueName('app'), ...base, ...body } });
    for (const [uri, devMode] of [
      ['https://rp.example.com/bcl?tenant=1', false],
      ['http://localhost:4000/bcl', true],
    ] as const) {
      const created = ok(await add({ backChannelLogoutUri: uri, devMode }));
      const stored = ok(await api(server, 'GET', `/management/v1/projects/${projectP}/apps/${created.appId}`, { token: server.pat })).app.oidcConfig;
      expect(stored.backChannelLogoutUri).toBe(uri);
    }
  });

  it('imports an app with them, reporting and dropping each', async () => {
    const orgId = uniqueName('imp');
    const result = ok(
      await importOrgs(server, [
        {
          orgId,
          org: { name: orgId },
          projects: [{ projectId: `${orgId}-p`, project: { name: 'P' } }],
          oidcApps: [
            {
              appId: `${orgId}-o`,
              app: {
                projectId: `${orgId}-p`,
                name: 'Web',
                ...base,
                backChannelLogoutUri: 'http://refused.example.com/bcl',
                loginVersion: { loginV2: { baseUri: 'https://login.example.com' } },
                grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_DEVICE_CODE'],
              },
            },
          ],
        },
      ]),
    );
    expect(result.success.orgs[0].oidcAppIds).toEqual([`${orgId}-o`]);
    expect(result.errors).toEqual([
      { type: 'oidc_app', id: `${orgId}-o`, message: expect.stringMatching(/loginV2 is not supported.*imported without it/) },
      { type: 'oidc_app', id: `${orgId}-o`, message: expect.stringMatching(/backChannelLogoutUri: .*allowed only in dev mode.*imported without it/) },
    ]);
    const app = ok(await api(server, 'GET', `/management/v1/projects/${orgId}-p/apps/${orgId}-o`, { token: server.pat, orgId })).app.oidcConfig;
    expect(app).not.toHaveProperty('backChannelLogoutUri');
    expect(app).not.toHaveProperty('loginVersion');
    expect(app.grantTypes).toEqual(['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_DEVICE_CODE']);
  });
});

describe('CORS of the token-based endpoints', () => {
  const paths = ['/oauth/v2/token', '/oauth/v2/introspect', '/oauth/v2/revoke', '/oidc/v1/userinfo'];
  const preflight = (path: string, origin: string) =>
    fetch(server.url + path, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
    });

  it("answers an app's additionalOrigins and redirect URI origins, and no other origin", async () => {
    const spaOrigin = `https://${uniqueName('spa')}.example.com`;
    const redirectOrigin = `https://${uniqueName('cb')}.example.com`;
    const spa = await createWebApp(server, { projectId: projectP, redirectUris: [`${redirectOrigin}/callback`], additionalOrigins: [spaOrigin] });
    for (const path of paths) {
      for (const origin of [spaOrigin, redirectOrigin]) {
        const res = await preflight(path, origin);
        expect({ path, status: res.status }).toEqual({ path, status: 204 });
        expect(res.headers.get('access-control-allow-origin')).toBe(origin);
        expect(res.headers.get('vary')).toMatch(/Origin/);
      }
      expect((await preflight(path, 'https://evil.example.com')).headers.get('access-control-allow-origin')).toBeNull();
    }
    // Errors carry the header too, so the app can read them.
    const failed = await post('/oauth/v2/token', { grant_type: 'x' }, undefined, { origin: spaOrigin });
    expect(failed.status).toBe(400);
    expect(failed.headers.get('access-control-allow-origin')).toBe(spaOrigin);
    const evil = await post('/oauth/v2/token', { grant_type: 'x' }, undefined, { origin: 'https://evil.example.com' });
    expect(evil.headers.get('access-control-allow-origin')).toBeNull();

    // Changing the app's config changes the allowed origins at once.
    const newOrigin = `https://${uniqueName('new')}.example.com`;
    ok(
      await api(server, 'PUT', `/management/v1/projects/${projectP}/apps/${spa.appId}/oidc_config`, {
        token: server.pat,
        body: { redirectUris: [`${redirectOrigin}/callback`], additionalOrigins: [newOrigin] },
      }),
    );
    expect((await preflight('/oauth/v2/token', newOrigin)).headers.get('access-control-allow-origin')).toBe(newOrigin);
    expect((await preflight('/oauth/v2/token', spaOrigin)).headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses additionalOrigins that are not origins', async () => {
    for (const origin of ['https://spa.example.com/path', 'spa.example.com', 'myapp://x', 'https://spa.example.com?q=1']) {
      const res = await api(server, 'POST', `/management/v1/projects/${projectP}/apps/oidc`, {
        token: server.pat,
        body: { name: uniqueName('bad-origin'), redirectUris: ['https://x.example.com/cb'], additionalOrigins: [origin] },
      });
      expect(res.status, origin).toBe(400);
      expect(res.body).toMatchObject({ code: 3, message: expect.stringMatching(/is not an origin/) });
    }
  });
});

describe('iframe embedding (instance security policy)', () => {
  const setPolicy = (body: Record<string, unknown>) => api(server, 'PUT', '/admin/v1/policies/security', { token: server.pat, body });
  const loginPage = async (target: InProcessServer, app: WebApp) => {
    const query = new URLSearchParams({ client_id: app.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid' });
    return new Agent(target).follow(`/oauth/v2/authorize?${query}`);
  };

  it("sends frame-ancestors 'self' and the allowed origins, and no X-Frame-Options DENY, only while enabled", async () => {
    try {
      ok(await setPolicy({ enableIframeEmbedding: true, allowedOrigins: ['https://portal.example.com', 'http://localhost:8080'] }));
      const framed = await loginPage(server, web);
      expect(framed.html).toContain('action="/ui/login/loginname"');
      expect(framed.headers.get('x-frame-options')).toBeNull();
      expect(framed.headers.get('content-security-policy')).toMatch(/frame-ancestors 'self' https:\/\/portal\.example\.com http:\/\/localhost:8080$/);
      const policy = ok(await api(server, 'GET', '/admin/v1/policies/security', { token: server.pat })).policy;
      expect(policy).toMatchObject({ enableIframeEmbedding: true, allowedOrigins: ['https://portal.example.com', 'http://localhost:8080'] });
      // Without https the cookie cannot be SameSite=None (browsers require Secure): it stays Lax.
      const res = await fetch(`${server.url}/oauth/v2/authorize?${new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid' })}`, {
        redirect: 'manual',
      });
      expect(res.headers.get('set-cookie')).toMatch(/SameSite=Lax$/);
    } finally {
      ok(await setPolicy({ enableIframeEmbedding: false }));
    }
    const denied = await loginPage(server, web);
    expect(denied.headers.get('x-frame-options')).toBe('DENY');
    expect(denied.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
  });

  it('refuses allowedOrigins that are not origins', async () => {
    for (const origin of ['https://portal.example.com/path', "https://a.example.com;script-src 'unsafe-inline'", '*', 'portal.example.com']) {
      const res = await setPolicy({ enableIframeEmbedding: true, allowedOrigins: [origin] });
      expect(res.status, origin).toBe(400);
      expect(res.body).toMatchObject({ code: 3, message: expect.stringMatching(/allowedOrigins: .* is not an origin/) });
    }
    expect(ok(await api(server, 'GET', '/admin/v1/policies/security', { token: server.pat })).policy.enableIframeEmbedding ?? false).toBe(false);
  });

  it('makes the https user-agent cookie SameSite=None; Secure while embedding is enabled, also after a restart', async () => {
    const dataDir = tempDataDir();
    const env = { SESAME_ISSUER: 'https://embed.example.test' };
    let secure = await startInProcess({ dataDir, env });
    try {
      const app = await createWebApp(secure);
      const cookie = async () =>
        (
          await fetch(`${secure.url}/oauth/v2/authorize?${new URLSearchParams({ client_id: app.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid' })}`, { redirect: 'manual' })
        ).headers.get('set-cookie');
      expect(await cookie()).toMatch(/; SameSite=Lax; Secure$/);
      ok(await api(secure, 'PUT', '/admin/v1/policies/security', { token: secure.pat, body: { enableIframeEmbedding: true } }));
      expect(await cookie()).toMatch(/^__Host-sesame\.useragent=[^;]+; Path=\/; Max-Age=\d+; HttpOnly; SameSite=None; Secure$/);
      await secure.close({ keepData: true });
      secure = await startInProcess({ dataDir, env });
      expect(await cookie()).toMatch(/; SameSite=None; Secure$/);
      const page = await loginPage(secure, app);
      expect(page.headers.get('content-security-policy')).toMatch(/frame-ancestors 'self'$/);
    } finally {
      await secure.close();
      (await import('node:fs')).rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('native app loopback redirects (appType)', () => {
  it('match on any port for native apps only (RFC 8252 §7.3)', async () => {
    const native = await createWebApp(server, {
      projectId: projectP,
      appType: 'OIDC_APP_TYPE_NATIVE',
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
      redirectUris: ['http://127.0.0.1:5000/callback'],
    });
    const authorize = (clientId: string, redirectUri: string) =>
      fetch(
        `${server.url}/oauth/v2/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: 'code', scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })}`,
        { redirect: 'manual' },
      );
    for (const uri of ['http://127.0.0.1:5000/callback', 'http://127.0.0.1:51234/callback', 'http://127.0.0.1/callback']) {
      const res = await authorize(native.clientId, uri);
      expect({ uri, status: res.status }).toEqual({ uri, status: 302 });
      expect(res.headers.get('location')).toMatch(/\/ui\/login\//);
    }
    for (const uri of ['http://127.0.0.1:51234/other', 'http://localhost:5000/callback', 'https://127.0.0.1:5000/callback']) {
      expect({ uri, status: (await authorize(native.clientId, uri)).status }).toEqual({ uri, status: 400 });
    }
    // A web app's loopback redirect is matched exactly.
    expect((await authorize(web.clientId, 'http://localhost:9998/callback')).status).toBe(400);
  });
});
