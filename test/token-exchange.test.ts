import { createPrivateKey, randomUUID, sign as cryptoSign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { api, createMachineClient } from './helpers/api.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';

/**
 * RFC 8693 token exchange: the feature flag, every cell of the seed's token type matrix, the
 * audience and scope subset rules, impersonation with the security policy, and `act` through
 * introspection and userinfo.
 */
let server: InProcessServer;
let projectId: string;
let app: { clientId: string; clientSecret: string };
let introspector: { clientId: string; clientSecret: string };
let keyApp: { clientId: string; kid: string; key: ReturnType<typeof createPrivateKey> };
let subject: { userId: string; clientId: string; clientSecret: string };
let actor: { userId: string; clientId: string; clientSecret: string };
let person: string;

const FORM = 'application/x-www-form-urlencoded';
const T = {
  access: 'urn:ietf:params:oauth:token-type:access_token',
  refresh: 'urn:ietf:params:oauth:token-type:refresh_token',
  id: 'urn:ietf:params:oauth:token-type:id_token',
  jwt: 'urn:ietf:params:oauth:token-type:jwt',
  zitadelUser: 'urn:zitadel:params:oauth:token-type:user_id',
  seedUser: 'urn:service:params:oauth:token-type:user_id',
};
const basic = (c: { clientId: string; clientSecret: string }) => `Basic ${Buffer.from(`${encodeURIComponent(c.clientId)}:${encodeURIComponent(c.clientSecret)}`).toString('base64')}`;
const aud = () => `urn:zitadel:iam:org:project:id:${projectId}:aud`;

async function post(path: string, body: Record<string, string>, auth?: string) {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': FORM, ...(auth ? { authorization: auth } : {}) },
    body: new URLSearchParams(body).toString(),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, any> };
}

async function ccToken(machine: { clientId: string; clientSecret: string }, scope = `openid profile ${aud()}`) {
  const res = await post('/oauth/v2/token', { grant_type: 'client_credentials', scope }, basic(machine));
  expect(res.status).toBe(200);
  return res.body.access_token as string;
}

const exchange = (params: Record<string, string>, auth = basic(app)) => post('/oauth/v2/token', { grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', ...params }, auth);
const introspect = async (token: string) => (await post('/oauth/v2/introspect', { token }, basic(introspector))).body;
const setPolicy = (enableImpersonation: boolean) => api(server, 'PUT', '/admin/v1/policies/security', { token: server.pat, body: { enableImpersonation } });

beforeAll(async () => {
  server = await startInProcess();
  const project = await api(server, 'POST', '/management/v1/projects', { token: server.pat, body: { name: 'exchange' } });
  projectId = project.body.id;
  const oidcApp = await api(server, 'POST', `/management/v1/projects/${projectId}/apps/oidc`, {
    token: server.pat,
    body: {
      name: 'exchanger',
      redirectUris: ['https://rp.example/cb'],
      grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_TOKEN_EXCHANGE', 'OIDC_GRANT_TYPE_REFRESH_TOKEN'],
      accessTokenType: 'OIDC_TOKEN_TYPE_BEARER',
    },
  });
  expect(oidcApp.status).toBe(200);
  app = { clientId: oidcApp.body.clientId, clientSecret: oidcApp.body.clientSecret };
  const api1 = await api(server, 'POST', `/management/v1/projects/${projectId}/apps/api`, { token: server.pat, body: { name: 'introspector' } });
  introspector = { clientId: api1.body.clientId, clientSecret: api1.body.clientSecret };

  const keyed = await api(server, 'POST', `/management/v1/projects/${projectId}/apps/oidc`, {
    token: server.pat,
    body: {
      name: 'key-exchanger',
      redirectUris: ['https://rp.example/cb'],
      grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_TOKEN_EXCHANGE'],
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT',
    },
  });
  expect(keyed.status).toBe(200);
  const key = await api(server, 'POST', `/management/v1/projects/${projectId}/apps/${keyed.body.appId}/keys`, { token: server.pat, body: { type: 'KEY_TYPE_JSON' } });
  const file = JSON.parse(Buffer.from(key.body.keyDetails, 'base64').toString());
  keyApp = { clientId: keyed.body.clientId, kid: file.keyId, key: createPrivateKey(file.key) };

  subject = await createMachineClient(server, 'te-subject', 'ACCESS_TOKEN_TYPE_JWT');
  actor = await createMachineClient(server, 'te-actor');
  const human = await api(server, 'POST', '/management/v1/users/human', {
    token: server.pat,
    body: { userName: 'impersonated', profile: { firstName: 'Imp', lastName: 'Ersonated' }, email: { email: 'imp@example.com' }, initialPassword: 'Secret-Passw0rd!' },
  });
  person = human.body.userId;
});

afterAll(async () => {
  await server?.close();
});

describe('feature flag', () => {
  it('is off by default: unsupported_grant_type and not advertised', async () => {
    const res = await exchange({ subject_token: await ccToken(subject), subject_token_type: T.access });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('unsupported_grant_type');
    const doc = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as { grant_types_supported: string[] };
    expect(doc.grant_types_supported).not.toContain('urn:ietf:params:oauth:grant-type:token-exchange');
  });

  it('is switched on through the feature API and then advertised', async () => {
    expect((await api(server, 'PUT', '/v2/features/instance', { body: { oidcTokenExchange: true } })).status).toBe(401);
    expect((await api(server, 'PUT', '/v2/features/instance', { token: server.pat, body: { oidcTokenExchange: true } })).status).toBe(200);
    // Features Sesame does not have are refused by name, not dropped.
    const unknown = await api(server, 'PUT', '/v2/features/instance', { token: server.pat, body: { oidcTokenExchange: true, loginV2: { required: true } } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toMatch(/loginV2: not supported by Sesame/);
    const features = await api(server, 'GET', '/v2/features/instance', { token: server.pat });
    expect(features.body.oidcTokenExchange).toEqual({ enabled: true, source: 'SOURCE_INSTANCE' });
    const doc = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as { grant_types_supported: string[] };
    expect(doc.grant_types_supported).toContain('urn:ietf:params:oauth:grant-type:token-exchange');
  });
});

describe('delegation (no actor)', () => {
  it('exchanges an access token for an opaque access token by default', async () => {
    const res = await exchange({ subject_token: await ccToken(subject), subject_token_type: T.access, scope: `profile ${aud()}` });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ issued_token_type: T.access, token_type: 'Bearer', scope: `profile ${aud()}` });
    expect(res.body.access_token.split('.')).toHaveLength(1);
    expect(await introspect(res.body.access_token)).toMatchObject({ active: true, sub: subject.userId, client_id: app.clientId });
  });

  it('issues a JWT access token for requested_token_type jwt', async () => {
    const res = await exchange({ subject_token: await ccToken(subject), subject_token_type: T.access, requested_token_type: T.jwt });
    expect(res.body.issued_token_type).toBe(T.jwt);
    const { payload } = await jwtVerify(res.body.access_token, createRemoteJWKSet(new URL(`${server.url}/oauth/v2/keys`)), { typ: 'at+jwt' });
    expect(payload.sub).toBe(subject.userId);
    expect(payload.act).toBeUndefined();
  });

  it('returns an ID token with token_type N_A for requested_token_type id_token', async () => {
    const res = await exchange({ subject_token: await ccToken(subject), subject_token_type: T.access, requested_token_type: T.id });
    expect(res.body).toMatchObject({ issued_token_type: T.id, token_type: 'N_A' });
    expect(decodeProtectedHeader(res.body.access_token).typ).toBe('JWT');
  });

  it('accepts an ID token as subject', async () => {
    const idToken = (await exchange({ subject_token: await ccToken(subject), subject_token_type: T.access, requested_token_type: T.id })).body.access_token;
    const res = await exchange({ subject_token: idToken, subject_token_type: T.id, scope: '' });
    expect(res.status).toBe(200);
    expect(res.body.id_token).toBeUndefined();
    expect(await introspect(res.body.access_token)).toMatchObject({ active: true, sub: subject.userId });
    // openid must be among the subject's scopes (an ID token as subject carries none).
    expect((await exchange({ subject_token: idToken, subject_token_type: T.id, scope: 'openid' })).body.error).toBe('invalid_scope');
  });

  it('narrows the audience and scope, and refuses to widen them', async () => {
    const token = await ccToken(subject);
    expect((await exchange({ subject_token: token, subject_token_type: T.access, audience: projectId })).status).toBe(200);
    const wider = await exchange({ subject_token: token, subject_token_type: T.access, audience: 'some-other-api' });
    expect(wider.body.error).toBe('invalid_target');
    const more = await exchange({ subject_token: token, subject_token_type: T.access, scope: 'email' });
    expect(more.body.error).toBe('invalid_scope');
  });

  it('refuses refresh tokens, resource, unknown types and malformed requests', async () => {
    const token = await ccToken(subject);
    const cases: [Record<string, string>, string][] = [
      [{ subject_token: 'x', subject_token_type: T.refresh }, 'invalid_request'],
      [{ subject_token: token, subject_token_type: T.access, requested_token_type: T.refresh }, 'invalid_request'],
      [{ subject_token: token, subject_token_type: T.access, actor_token: token, actor_token_type: T.refresh }, 'invalid_request'],
      [{ subject_token: token, subject_token_type: T.access, resource: 'https://api.example' }, 'invalid_target'],
      [{ subject_token: token, subject_token_type: 'urn:example:unknown' }, 'invalid_request'],
      [{ subject_token: token }, 'invalid_request'],
      [{ subject_token_type: T.access }, 'invalid_request'],
      [{ subject_token: token, subject_token_type: T.access, actor_token: token }, 'invalid_request'],
      [{ subject_token: 'garbage', subject_token_type: T.access }, 'invalid_request'],
      [{ subject_token: person, subject_token_type: T.zitadelUser }, 'invalid_request'],
      [{ subject_token: person, subject_token_type: T.seedUser }, 'invalid_request'],
      [{ subject_token: 'a.b.c', subject_token_type: T.jwt }, 'invalid_request'],
    ];
    for (const [params, error] of cases) {
      const res = await exchange(params);
      expect({ params, status: res.status, error: res.body.error }).toEqual({ params, status: 400, error });
    }
  });

  it('needs the grant on the app', async () => {
    const plain = await api(server, 'POST', `/management/v1/projects/${projectId}/apps/oidc`, {
      token: server.pat,
      body: { name: 'no-exchange', redirectUris: ['https://rp.example/cb'] },
    });
    const res = await exchange({ subject_token: await ccToken(subject), subject_token_type: T.access }, basic({ clientId: plain.body.clientId, clientSecret: plain.body.clientSecret }));
    expect(res.body.error).toBe('unauthorized_client');
  });

  it('issues a refresh token for offline_access', async () => {
    const token = await ccToken(subject, `offline_access profile ${aud()}`);
    // client_credentials drops offline_access, so it is not in the subject's scope.
    expect((await exchange({ subject_token: token, subject_token_type: T.access, scope: 'offline_access' })).body.error).toBe('invalid_scope');
  });
});

describe('impersonation (actor token)', () => {
  it('needs the security policy', async () => {
    expect((await setPolicy(false)).status).toBe(200);
    const res = await exchange({ subject_token: person, subject_token_type: T.zitadelUser, actor_token: await ccToken(actor), actor_token_type: T.access });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('invalid_request');
  });

  it('needs an impersonator role', async () => {
    await setPolicy(true);
    const res = await exchange({ subject_token: person, subject_token_type: T.zitadelUser, actor_token: await ccToken(actor), actor_token_type: T.access });
    expect(res.status).toBe(403);
    // An instance-wide impersonator acts only through the instance's own apps (the management
    // project's); this app is of the default org, so the impersonator below is one of that org.
    const instanceWide = await createMachineClient(server, 'te-instance-actor');
    expect((await api(server, 'POST', '/admin/v1/members', { token: server.pat, body: { userId: instanceWide.userId, roles: ['IAM_END_USER_IMPERSONATOR'] } })).status).toBe(200);
    const refused = await exchange({ subject_token: person, subject_token_type: T.zitadelUser, actor_token: await ccToken(instanceWide), actor_token_type: T.access });
    expect(refused.status).toBe(403);
    expect(refused.body.error_description).toMatch(/administers beyond this app's organization/);
    const granted = await api(server, 'POST', '/management/v1/orgs/me/members', { token: server.pat, body: { userId: actor.userId, roles: ['ORG_END_USER_IMPERSONATOR'] } });
    expect(granted.status).toBe(200);
  });

  it('acts as a user id (both URNs) and marks the tokens with act', async () => {
    for (const type of [T.zitadelUser, T.seedUser]) {
      const res = await exchange({
        subject_token: person,
        subject_token_type: type,
        actor_token: await ccToken(actor),
        actor_token_type: T.access,
        requested_token_type: T.jwt,
        scope: `openid profile offline_access ${aud()}`,
      });
      expect(res.status).toBe(200);
      const jwks = createRemoteJWKSet(new URL(`${server.url}/oauth/v2/keys`));
      const { payload } = await jwtVerify(res.body.access_token, jwks);
      expect(payload.sub).toBe(person);
      expect(payload.act).toEqual({ iss: server.issuer, sub: actor.userId });
      const info = await introspect(res.body.access_token);
      expect(info).toMatchObject({ active: true, sub: person, act: { iss: server.issuer, sub: actor.userId } });
      const userinfo = await fetch(`${server.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${res.body.access_token}` } });
      expect(await userinfo.json()).toMatchObject({ sub: person, act: { sub: actor.userId } });
      const id = await jwtVerify(res.body.id_token, jwks);
      expect(id.payload.act).toEqual({ iss: server.issuer, sub: actor.userId });
      // The refresh token keeps the act on every refreshed token.
      expect(res.body.refresh_token).toBeDefined();
      const refreshed = await post('/oauth/v2/token', { grant_type: 'refresh_token', refresh_token: res.body.refresh_token }, basic(app));
      expect(refreshed.status).toBe(200);
      expect(await introspect(refreshed.body.access_token)).toMatchObject({ active: true, sub: person, act: { sub: actor.userId } });
    }
  });

  it('refuses to let an end-user impersonator act as an administrator', async () => {
    const members = await api(server, 'POST', '/admin/v1/members/_search', { token: server.pat, body: {} });
    const admin = (members.body.result as { userId: string; roles: string[] }[]).find((m) => m.roles.includes('IAM_OWNER'))!.userId;
    const res = await exchange({ subject_token: admin, subject_token_type: T.zitadelUser, actor_token: await ccToken(actor), actor_token_type: T.access });
    expect(res.status).toBe(403);
  });

  it('nests act for a chain of actors', async () => {
    const first = await exchange({ subject_token: person, subject_token_type: T.zitadelUser, actor_token: await ccToken(actor), actor_token_type: T.access, scope: aud() });
    const second = await exchange({ subject_token: first.body.access_token, subject_token_type: T.access, actor_token: await ccToken(actor), actor_token_type: T.access });
    expect(second.status).toBe(200);
    expect(await introspect(second.body.access_token)).toMatchObject({ act: { iss: server.issuer, sub: actor.userId, act: { sub: actor.userId } } });
  });

  it('accepts a jwt subject signed by the calling client, authenticated with private_key_jwt', async () => {
    const now = Math.floor(server.clock.now() / 1000);
    const sign = (claims: Record<string, unknown>) =>
      new SignJWT({ iss: keyApp.clientId, aud: server.issuer, iat: now, exp: now + 60, jti: randomUUID(), ...claims }).setProtectedHeader({ alg: 'RS256', kid: keyApp.kid }).sign(keyApp.key);
    const body = {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: await sign({ sub: person }),
      subject_token_type: T.jwt,
      actor_token: await ccToken(actor),
      actor_token_type: T.access,
      requested_token_type: T.jwt,
      client_id: keyApp.clientId,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: await sign({ sub: keyApp.clientId }),
    };
    const res = await post('/oauth/v2/token', body);
    expect(res.status).toBe(200);
    const { payload } = await jwtVerify(res.body.access_token, createRemoteJWKSet(new URL(`${server.url}/oauth/v2/keys`)));
    expect(payload).toMatchObject({ sub: person, act: { sub: actor.userId } });
    // The same subject JWT cannot be replayed.
    const again = await post('/oauth/v2/token', { ...body, client_assertion: await sign({ sub: keyApp.clientId }) });
    expect(again.body.error).toBe('invalid_request');
  });

  it('refuses a jwt subject or a client assertion with a critical header extension (RFC 7515 §4.1.11)', async () => {
    const now = Math.floor(server.clock.now() / 1000);
    // Signed with node:crypto: jose will not sign a crit it does not understand.
    const sign = (claims: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
      const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
      const input = `${enc({ alg: 'RS256', kid: keyApp.kid, ...extra })}.${enc({ iss: keyApp.clientId, aud: server.issuer, iat: now, exp: now + 60, jti: randomUUID(), ...claims })}`;
      return `${input}.${cryptoSign('sha256', Buffer.from(input), keyApp.key).toString('base64url')}`;
    };
    const crit = { crit: ['urn:example:unknown'], 'urn:example:unknown': true };
    const actorToken = await ccToken(actor);
    const body = (subject: string, assertion: string) => ({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: subject,
      subject_token_type: T.jwt,
      actor_token: actorToken,
      actor_token_type: T.access,
      client_id: keyApp.clientId,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
    });
    const good = await post('/oauth/v2/token', body(sign({ sub: person }), sign({ sub: keyApp.clientId })));
    expect(good.status, JSON.stringify(good.body)).toBe(200);
    const subject = await post('/oauth/v2/token', body(sign({ sub: person }, crit), sign({ sub: keyApp.clientId })));
    expect(subject.status).toBe(400);
    expect(subject.body).toMatchObject({ error: 'invalid_request' });
    expect(subject.body.error_description).toMatch(/critical header parameter urn:example:unknown/);
    const client = await post('/oauth/v2/token', body(sign({ sub: person }), sign({ sub: keyApp.clientId }, crit)));
    expect(client.status).toBe(401);
    expect(client.body).toMatchObject({ error: 'invalid_client' });
  });
});
