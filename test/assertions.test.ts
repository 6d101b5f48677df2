import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, sign as cryptoSign, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { createRemoteJWKSet, importPKCS8, jwtVerify, SignJWT } from 'jose';
import { api, basicAuth, createApiApp, createMachineClient, postForm } from './helpers/api.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';

/**
 * Signed assertions: private_key_jwt client authentication (app keys) and the JWT profile grant
 * (machine keys, ZITADEL key files used as they come). Assertions are built with jose, as a client would.
 */
let server: InProcessServer;
let projectId: string;
let app: { appId: string; clientId: string };
let appKey: { kid: string; key: KeyObject };
let machine: { userId: string; keyFile: { type: string; keyId: string; key: string; expirationDate: string; userId: string } };

/** The server's time: assertions are dated by it, as a client with a synchronised clock would. */
const clock = new TestClock();
const now = () => Math.floor(clock.now() / 1000);
const FORM = 'application/x-www-form-urlencoded';
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

async function sign(key: KeyObject | Uint8Array, header: Record<string, unknown>, claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims).setProtectedHeader(header as any).sign(key as any);
}

function clientAssertion(overrides: Record<string, unknown> = {}, header: Record<string, unknown> = {}, key: KeyObject = appKey.key) {
  return sign(
    key,
    { alg: 'RS256', kid: appKey.kid, ...header },
    {
      iss: app.clientId,
      sub: app.clientId,
      aud: server.issuer,
      iat: now(),
      exp: now() + 60,
      jti: randomUUID(),
      ...overrides,
    },
  );
}

/**
 * An RS256 JWS with any protected header, signed with node:crypto: jose refuses to sign a `crit`
 * it was not told it understands, and a client that does is exactly what the server must refuse.
 */
function rawRs256(key: KeyObject, header: Record<string, unknown>, claims: Record<string, unknown>): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${enc(header)}.${enc(claims)}`;
  return `${input}.${cryptoSign('sha256', Buffer.from(input), key).toString('base64url')}`;
}

/** Header variants RFC 7515/7797 require a verifier to refuse, each with the error it names. */
const REFUSED_HEADERS: [string, Record<string, unknown>, RegExp][] = [
  ['an unknown critical extension', { crit: ['urn:example:unknown'], 'urn:example:unknown': true }, /critical header parameter urn:example:unknown/],
  ['crit naming an absent parameter', { crit: ['exp'] }, /critical header parameter exp/],
  ['a malformed crit (empty list)', { crit: [] }, /crit header parameter is malformed/],
  ['a malformed crit (not a list)', { crit: 'urn:example:unknown' }, /crit header parameter is malformed/],
  ['an unencoded payload (b64: false, with crit)', { b64: false, crit: ['b64'] }, /critical header parameter b64/],
  ['an unencoded payload (b64: false, without crit)', { b64: false }, /b64/],
];

const clientClaims = () => ({ iss: app.clientId, sub: app.clientId, aud: server.issuer, iat: now(), exp: now() + 60, jti: randomUUID() });

async function introspectWith(assertion: string, token = 'anything', clientId: string | undefined = app.clientId) {
  const body = new URLSearchParams({ token, client_assertion_type: ASSERTION_TYPE, client_assertion: assertion });
  if (clientId) body.set('client_id', clientId);
  const res = await fetch(`${server.url}/oauth/v2/introspect`, { method: 'POST', headers: { 'content-type': FORM }, body: body.toString() });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function addAppKey(publicKey?: string, expirationDate?: string) {
  const res = await api(server, 'POST', `/management/v1/projects/${projectId}/apps/${app.appId}/keys`, {
    token: server.pat,
    body: { type: 'KEY_TYPE_JSON', ...(publicKey ? { publicKey: Buffer.from(publicKey).toString('base64') } : {}), ...(expirationDate ? { expirationDate } : {}) },
  });
  expect(res.status).toBe(200);
  return res.body as { id: string; keyDetails?: string };
}

beforeAll(async () => {
  server = await startInProcess({ clock });
  const project = await api(server, 'POST', '/management/v1/projects', { token: server.pat, body: { name: 'assertions' } });
  projectId = project.body.id;
  const created = await api(server, 'POST', `/management/v1/projects/${projectId}/apps/api`, {
    token: server.pat,
    body: { name: 'resource-server', authMethodType: 'API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT' },
  });
  expect(created.status).toBe(200);
  expect(created.body.clientSecret).toBeUndefined();
  app = { appId: created.body.appId, clientId: created.body.clientId };
  const key = await addAppKey();
  const file = JSON.parse(Buffer.from(key.keyDetails!, 'base64').toString()) as { keyId: string; key: string; clientId: string; type: string };
  expect(file).toMatchObject({ type: 'application', keyId: key.id, clientId: app.clientId });
  appKey = { kid: file.keyId, key: createPrivateKey(file.key) };

  const user = await api(server, 'POST', '/management/v1/users/machine', {
    token: server.pat,
    body: { userName: 'keyed-service', name: 'Keyed service', accessTokenType: 'ACCESS_TOKEN_TYPE_JWT' },
  });
  const machineKey = await api(server, 'POST', `/management/v1/users/${user.body.userId}/keys`, { token: server.pat, body: { type: 'KEY_TYPE_JSON' } });
  expect(machineKey.status).toBe(200);
  machine = { userId: user.body.userId, keyFile: JSON.parse(Buffer.from(machineKey.body.keyDetails, 'base64').toString()) };
});

afterAll(async () => {
  await server?.close();
});

describe('private_key_jwt', () => {
  it('authenticates an app key assertion at introspection', async () => {
    const res = await introspectWith(await clientAssertion());
    expect(res).toEqual({ status: 200, body: { active: false } });
    // client_id may be left out: the assertion's iss names the client.
    expect((await introspectWith(await clientAssertion(), 'x', undefined)).status).toBe(200);
  });

  it('works with openid-client PrivateKeyJwt', async () => {
    // openid-client signs with a WebCrypto key, as a relying party would hold it, and dates its
    // assertion by the system clock: the server's follows it meanwhile.
    await clock.following(async () => {
      const cryptoKey = await importPKCS8(appKey.key.export({ format: 'pem', type: 'pkcs8' }).toString(), 'RS256');
      const config = await oidc.discovery(new URL(server.issuer), app.clientId, {}, oidc.PrivateKeyJwt({ key: cryptoKey, kid: appKey.kid }), {
        execute: [oidc.allowInsecureRequests],
      });
      const machineClient = await createMachineClient(server, 'introspected');
      const tokenRes = await fetch(`${server.url}/oauth/v2/token`, {
        method: 'POST',
        headers: { 'content-type': FORM, authorization: `Basic ${Buffer.from(`${encodeURIComponent(machineClient.clientId)}:${machineClient.clientSecret}`).toString('base64')}` },
        body: `grant_type=client_credentials&scope=${encodeURIComponent(`urn:zitadel:iam:org:project:id:${projectId}:aud`)}`,
      });
      const { access_token } = (await tokenRes.json()) as { access_token: string };
      expect(await oidc.tokenIntrospection(config, access_token)).toMatchObject({ active: true, sub: machineClient.userId });
    });
  });

  it('accepts the token endpoint URL as audience', async () => {
    expect((await introspectWith(await clientAssertion({ aud: [`${server.issuer}/oauth/v2/token`] }))).status).toBe(200);
  });

  const failing: [string, () => Promise<string>][] = [
    ['wrong aud', () => clientAssertion({ aud: 'https://elsewhere.example' })],
    ['expired', () => clientAssertion({ iat: now() - 120, exp: now() - 60 })],
    ['iat in the future', () => clientAssertion({ iat: now() + 300 })],
    ['iat too old', () => clientAssertion({ iat: now() - 7200, exp: now() + 60 })],
    ['iss is not the client', () => clientAssertion({ iss: 'someone-else' })],
    ['unknown kid', () => clientAssertion({}, { kid: 'no-such-key' })],
    ['no kid', () => sign(appKey.key, { alg: 'RS256' }, { iss: app.clientId, sub: app.clientId, aud: server.issuer, iat: now(), exp: now() + 60 })],
    ['foreign key', () => clientAssertion({}, {}, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey)],
    [
      'wrong algorithm for the key',
      () =>
        sign(
          generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey,
          { alg: 'ES256', kid: appKey.kid },
          { iss: app.clientId, sub: app.clientId, aud: server.issuer, iat: now(), exp: now() + 60 },
        ),
    ],
    [
      'alg none',
      async () => {
        const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
        return `${enc({ alg: 'none', kid: appKey.kid })}.${enc({ iss: app.clientId, sub: app.clientId, aud: server.issuer, iat: now(), exp: now() + 60 })}.`;
      },
    ],
    [
      'HS256 with the public key as secret',
      async () => {
        const secret = Buffer.from(createPublicKey(appKey.key).export({ format: 'pem', type: 'spki' }).toString());
        return sign(secret, { alg: 'HS256', kid: appKey.kid }, { iss: app.clientId, sub: app.clientId, aud: server.issuer, iat: now(), exp: now() + 60 });
      },
    ],
    ['garbage', async () => 'not.a.jwt'],
  ];
  for (const [name, build] of failing) {
    it(`rejects: ${name}`, async () => {
      const res = await introspectWith(await build());
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
    });
  }

  it('answers an unknown client, an unknown key and a bad signature alike; the reason is only in the log', async () => {
    const { privateKey: stranger } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const unknownClient = await introspectWith(await clientAssertion({ iss: 'no-such-client', sub: 'no-such-client' }), 'anything', 'no-such-client');
    const unknownKey = await introspectWith(await clientAssertion({}, { kid: 'no-such-key' }));
    const badSignature = await introspectWith(await clientAssertion({}, {}, stranger));
    for (const res of [unknownClient, unknownKey, badSignature]) {
      expect(res).toMatchObject({ status: 401, body: { error: 'invalid_client', error_description: 'assertion could not be verified' } });
    }
    const logs = server.logs();
    expect(logs).toContain('client unknown or not registered for private_key_jwt');
    expect(logs).toContain('no registered, unexpired key matches the assertion kid');
    expect(logs).toContain('assertion signature invalid');
  });

  it('rejects a replayed jti', async () => {
    const assertion = await clientAssertion();
    expect((await introspectWith(assertion)).status).toBe(200);
    const replay = await introspectWith(assertion);
    expect(replay.status).toBe(401);
    expect(replay.body.error_description).toMatch(/already used/);
  });

  it('accepts a byte-identical assertion without jti again within its lifetime (as ZITADEL SDKs send)', async () => {
    // ZITADEL's SDKs: iss = sub, aud, iat/exp in whole seconds, RS256, no jti; two calls within
    // one second send the same bytes.
    const noJti = await clientAssertion({ jti: undefined });
    expect((await introspectWith(noJti)).status).toBe(200);
    expect((await introspectWith(noJti)).status).toBe(200);
    const [a, b] = await Promise.all([introspectWith(noJti), introspectWith(noJti)]);
    expect([a.status, b.status]).toEqual([200, 200]);
  });

  for (const [name, header, why] of REFUSED_HEADERS) {
    it(`rejects an assertion with ${name} at introspection, revocation and the token endpoint`, async () => {
      const good = () => rawRs256(appKey.key, { alg: 'RS256', kid: appKey.kid }, clientClaims());
      const bad = () => rawRs256(appKey.key, { alg: 'RS256', kid: appKey.kid, ...header }, clientClaims());
      // The same assertion without the header parameter authenticates: the header alone is refused.
      expect((await introspectWith(good())).status).toBe(200);
      const introspection = await introspectWith(bad());
      expect(introspection).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
      expect(introspection.body.error_description).toMatch(why);

      const post = async (path: string, form: Record<string, string>, assertion: string) => {
        const body = new URLSearchParams({ ...form, client_id: app.clientId, client_assertion_type: ASSERTION_TYPE, client_assertion: assertion });
        const res = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': FORM }, body: body.toString() });
        return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
      };
      expect((await post('/oauth/v2/revoke', { token: 'unknown' }, good())).status).toBe(200);
      const revocation = await post('/oauth/v2/revoke', { token: 'unknown' }, bad());
      expect(revocation).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
      expect(revocation.body.error_description).toMatch(why);

      // At the token endpoint an authenticated client gets past client authentication to the grant.
      const grantForm = { grant_type: 'refresh_token', refresh_token: 'unknown' };
      expect((await post('/oauth/v2/token', grantForm, good())).body.error).not.toBe('invalid_client');
      const token = await post('/oauth/v2/token', grantForm, bad());
      expect(token).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
      expect(token.body.error_description).toMatch(why);
    });
  }

  it('rejects an RSA key shorter than 2048 bits, as jose does', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const key = await addAppKey(publicKey.export({ format: 'pem', type: 'spki' }).toString());
    const res = await introspectWith(rawRs256(privateKey, { alg: 'RS256', kid: key.id }, clientClaims()));
    expect(res).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
  });

  // An expired key is refused: expiry.test.ts, on a clock the test moves.

  it('verifies ES256 and EdDSA keys registered by the caller', async () => {
    for (const [type, alg, options] of [
      ['ec', 'ES256', { namedCurve: 'P-256' }],
      ['ed25519', 'EdDSA', {}],
    ] as const) {
      const { privateKey, publicKey } = generateKeyPairSync(type as any, options as any) as unknown as { privateKey: KeyObject; publicKey: KeyObject };
      const key = await addAppKey(publicKey.export({ format: 'pem', type: 'spki' }).toString());
      expect(key.keyDetails).toBeUndefined();
      expect((await introspectWith(await clientAssertion({}, { alg, kid: key.id }, privateKey))).status).toBe(200);
    }
  });

  it('is refused for an app registered with a secret', async () => {
    const basicApp = await api(server, 'POST', `/management/v1/projects/${projectId}/apps/api`, { token: server.pat, body: { name: 'basic-api' } });
    const res = await introspectWith(await clientAssertion({ iss: basicApp.body.clientId, sub: basicApp.body.clientId }), 'x', basicApp.body.clientId);
    expect(res.status).toBe(401);
  });
});

describe('JWT profile grant', () => {
  const grant = async (assertion: string, scope?: string) => {
    const body = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion });
    if (scope) body.set('scope', scope);
    const res = await fetch(`${server.url}/oauth/v2/token`, { method: 'POST', headers: { 'content-type': FORM }, body: body.toString() });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  const profileAssertion = (overrides: Record<string, unknown> = {}, header: Record<string, unknown> = {}) =>
    sign(
      createPrivateKey(machine.keyFile.key),
      { alg: 'RS256', kid: machine.keyFile.keyId, ...header },
      {
        iss: machine.keyFile.userId,
        sub: machine.keyFile.userId,
        aud: server.issuer,
        iat: now(),
        exp: now() + 3600,
        ...overrides,
      },
    );

  it('trades a ZITADEL-format key file assertion for tokens, with an ID token for openid', async () => {
    expect(machine.keyFile).toMatchObject({ type: 'serviceaccount', userId: machine.userId });
    expect(machine.keyFile.key).toContain('-----BEGIN RSA PRIVATE KEY-----');
    const res = await grant(await profileAssertion(), `openid profile urn:zitadel:iam:org:project:id:${projectId}:aud`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 43200, scope: `openid profile urn:zitadel:iam:org:project:id:${projectId}:aud` });
    expect(res.body.refresh_token).toBeUndefined();
    const jwks = createRemoteJWKSet(new URL(`${server.url}/oauth/v2/keys`));
    const access = await jwtVerify(res.body.access_token, jwks, { issuer: server.issuer, audience: projectId, typ: 'at+jwt' });
    expect(access.payload.sub).toBe(machine.userId);
    const id = await jwtVerify(res.body.id_token, jwks, { issuer: server.issuer, typ: 'JWT' });
    expect(id.payload.sub).toBe(machine.userId);
    expect(id.payload.at_hash).toBeDefined();
    expect(id.payload.amr).toBeUndefined();
  });

  it('answers invalid_grant for a bad assertion', async () => {
    for (const bad of [
      await profileAssertion({ aud: 'https://elsewhere.example' }),
      await profileAssertion({ exp: now() - 10, iat: now() - 100 }),
      await profileAssertion({ iat: now() + 600 }),
      await profileAssertion({}, { kid: 'unknown' }),
      await profileAssertion({ iss: 'someone', sub: 'someone' }),
      'garbage',
    ]) {
      const res = await grant(bad);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_grant');
    }
    expect((await fetch(`${server.url}/oauth/v2/token`, { method: 'POST', headers: { 'content-type': FORM }, body: 'grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer' })).status).toBe(
      400,
    );
  });

  for (const [name, header, why] of REFUSED_HEADERS) {
    it(`answers invalid_grant for an assertion with ${name}`, async () => {
      const key = createPrivateKey(machine.keyFile.key);
      const claims = () => ({ iss: machine.userId, sub: machine.userId, aud: server.issuer, iat: now(), exp: now() + 60, jti: randomUUID() });
      expect((await grant(rawRs256(key, { alg: 'RS256', kid: machine.keyFile.keyId }, claims()))).status).toBe(200);
      const res = await grant(rawRs256(key, { alg: 'RS256', kid: machine.keyFile.keyId, ...header }, claims()));
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_grant');
      expect(res.body.error_description).toMatch(why);
    });
  }

  it('accepts a byte-identical assertion without jti twice (ZITADEL SDKs sign one per request, no jti)', async () => {
    const assertion = await profileAssertion();
    const first = await grant(assertion);
    expect(first.status).toBe(200);
    const second = await grant(assertion);
    expect(second.status).toBe(200);
    expect(second.body.access_token).not.toBe(first.body.access_token);
  });

  it('rejects a replayed assertion that carries a jti', async () => {
    const assertion = await profileAssertion({ jti: randomUUID() });
    expect((await grant(assertion)).status).toBe(200);
    expect((await grant(assertion)).body.error).toBe('invalid_grant');
  });

  // A replay inside the leeway after exp: expiry.test.ts, on a clock the test moves.

  it('is advertised in discovery with private_key_jwt', async () => {
    const doc = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, string[]>;
    expect(doc.grant_types_supported).toContain('urn:ietf:params:oauth:grant-type:jwt-bearer');
    expect(doc.token_endpoint_auth_methods_supported).toContain('private_key_jwt');
    expect(doc.introspection_endpoint_auth_methods_supported).toContain('private_key_jwt');
  });
});

describe('removing keys', () => {
  const profileGrant = async (keyFile: { keyId: string; key: string; userId: string }, scope: string) => {
    const assertion = await sign(
      createPrivateKey(keyFile.key),
      { alg: 'RS256', kid: keyFile.keyId },
      { iss: keyFile.userId, sub: keyFile.userId, aud: server.issuer, iat: now(), exp: now() + 300, jti: randomUUID() },
    );
    const body = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion, scope });
    const res = await fetch(`${server.url}/oauth/v2/token`, { method: 'POST', headers: { 'content-type': FORM }, body: body.toString() });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  it('ListMachineKeys lists a machine user’s keys; RemoveMachineKey stops the key and voids what the user obtained before', async () => {
    const api_ = await createApiApp(server, 'key-removal');
    const scope = `urn:zitadel:iam:org:project:id:${api_.projectId}:aud`;
    const introspect = async (token: string) => (await postForm(server, '/oauth/v2/introspect', { token }, basicAuth(api_.clientId, api_.clientSecret))).body.active;
    const user = await api(server, 'POST', '/management/v1/users/machine', { token: server.pat, body: { userName: 'rotating-service', name: 'Rotating', accessTokenType: 'ACCESS_TOKEN_TYPE_JWT' } });
    const userId = user.body.userId as string;
    const addKey = async () => {
      const res = await api(server, 'POST', `/management/v1/users/${userId}/keys`, { token: server.pat, body: { type: 'KEY_TYPE_JSON' } });
      expect(res.status).toBe(200);
      return JSON.parse(Buffer.from(res.body.keyDetails, 'base64').toString()) as { keyId: string; key: string; userId: string };
    };
    const [oldKey, newKey] = [await addKey(), await addKey()];
    const listed = await api(server, 'POST', `/management/v1/users/${userId}/keys/_search`, { token: server.pat, body: { query: { asc: true } } });
    expect(listed.status).toBe(200);
    expect(listed.body.details.totalResult).toBe('2');
    expect(listed.body.result.map((k: { id: string }) => k.id).sort()).toEqual([oldKey.keyId, newKey.keyId].sort());
    expect(listed.body.result[0]).toMatchObject({ type: 'KEY_TYPE_JSON' });
    expect(JSON.stringify(listed.body)).not.toContain('PRIVATE KEY');

    const before = await profileGrant(oldKey, scope);
    expect(before.status).toBe(200);
    expect(await introspect(before.body.access_token)).toBe(true);
    // The horizon counts in whole seconds, as tokens do: the removal comes a second later.
    clock.advance(1000);
    const removed = await api(server, 'DELETE', `/management/v1/users/${userId}/keys/${oldKey.keyId}`, { token: server.pat });
    expect(removed.status).toBe(200);
    expect(removed.body.details.changeDate).toBeTruthy();

    expect((await profileGrant(oldKey, scope)).body.error).toBe('invalid_grant');
    expect(await introspect(before.body.access_token)).toBe(false);
    const after = await profileGrant(newKey, scope);
    expect(after.status).toBe(200);
    expect(await introspect(after.body.access_token)).toBe(true);
    expect((await api(server, 'GET', `/management/v1/users/${userId}/keys/${oldKey.keyId}`, { token: server.pat })).status).toBe(404);
    expect((await api(server, 'DELETE', `/management/v1/users/${userId}/keys/${oldKey.keyId}`, { token: server.pat })).status).toBe(404);
    // Another user's key is not this user's to remove.
    expect((await api(server, 'DELETE', `/management/v1/users/${userId}/keys/${machine.keyFile.keyId}`, { token: server.pat })).status).toBe(404);
    const remaining = await api(server, 'POST', `/management/v1/users/${userId}/keys/_search`, { token: server.pat, body: {} });
    expect(remaining.body.result.map((k: { id: string }) => k.id)).toEqual([newKey.keyId]);
    expect((await api(server, 'POST', `/management/v1/users/${userId}/keys/_search`, { token: server.pat, body: { query: { limit: 5000 } } })).status).toBe(400);
    const events = await api(server, 'POST', '/admin/v1/events/_search', { token: server.pat, body: { aggregateId: userId, eventTypes: ['user.machine.key.removed'] } });
    expect(events.body.events).toHaveLength(1);
  });

  it('ListAppKeys lists an app’s keys; RemoveAppKey stops its assertions', async () => {
    const extra = await addAppKey();
    const extraKey = { kid: extra.id, key: createPrivateKey(JSON.parse(Buffer.from(extra.keyDetails!, 'base64').toString()).key) };
    expect((await introspectWith(await clientAssertion({}, { kid: extraKey.kid }, extraKey.key))).status).toBe(200);
    const path = `/management/v1/projects/${projectId}/apps/${app.appId}/keys`;
    const ids = async () => ((await api(server, 'POST', `${path}/_search`, { token: server.pat, body: {} })).body.result ?? []).map((k: { id: string }) => k.id);
    expect(await ids()).toContain(extraKey.kid);
    expect(await ids()).toContain(appKey.kid);

    expect((await api(server, 'DELETE', `${path}/${extraKey.kid}`, { token: server.pat })).status).toBe(200);
    expect(await ids()).not.toContain(extraKey.kid);
    expect((await introspectWith(await clientAssertion({}, { kid: extraKey.kid }, extraKey.key))).status).toBe(401);
    // The app's other key still works; the removed one is gone for good.
    expect((await introspectWith(await clientAssertion())).status).toBe(200);
    expect((await api(server, 'DELETE', `${path}/${extraKey.kid}`, { token: server.pat })).status).toBe(404);
    expect((await api(server, 'GET', `${path}/${extraKey.kid}`, { token: server.pat })).status).toBe(404);
  });
});
