import { createPrivateKey, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeProtectedHeader, SignJWT } from 'jose';
import { api, createApiApp, createMachineClient } from './helpers/api.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { storedRecordCount } from './helpers/stored.js';
import { Agent, createHuman, createWebApp, responseParams, signIn, type Human, type WebApp } from './helpers/oidc.js';

/**
 * Behaviour that depends on time passing: token expiry and sweeping, signing key rotation, expired
 * assertion keys, replay protection through the leeway, max_age and auth_time. The server runs
 * in-process on a clock that stands still until a test moves it, and the periodic work (sweep,
 * rotation) runs when the test calls tick(): no test here waits for real time or depends on speed.
 */
const HOUR = 3_600_000;
const clock = new TestClock();
let server: InProcessServer;
let opaque: { clientId: string; clientSecret: string };
let jwt: { clientId: string; clientSecret: string };
let resource: { projectId: string; clientId: string; clientSecret: string };

const FORM = 'application/x-www-form-urlencoded';
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

async function token(client: { clientId: string; clientSecret: string }): Promise<string> {
  const res = await fetch(`${server.url}/oauth/v2/token`, {
    method: 'POST',
    headers: { 'content-type': FORM, authorization: basic(client.clientId, client.clientSecret) },
    body: `grant_type=client_credentials&scope=${encodeURIComponent(`urn:zitadel:iam:org:project:id:${resource.projectId}:aud`)}`,
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { access_token: string; expires_in: number };
  expect(body.expires_in).toBe(3600);
  return body.access_token;
}

async function active(t: string): Promise<boolean> {
  const res = await fetch(`${server.url}/oauth/v2/introspect`, {
    method: 'POST',
    headers: { 'content-type': FORM, authorization: basic(resource.clientId, resource.clientSecret) },
    body: `token=${encodeURIComponent(t)}`,
  });
  return ((await res.json()) as { active: boolean }).active;
}

beforeAll(async () => {
  server = await startInProcess({
    clock,
    env: {
      SESAME_ACCESS_TOKEN_LIFETIME: '1h',
      SESAME_ID_TOKEN_LIFETIME: '1h',
      SESAME_KEY_ROTATION_INTERVAL: '6h',
      // Only tick() sweeps, so the sweeping test shows what tick did.
      SESAME_SWEEP_INTERVAL: '24h',
      SESAME_SIGNING_ALG: 'EdDSA',
    },
  });
  opaque = await createMachineClient(server, 'expiring-opaque');
  jwt = await createMachineClient(server, 'expiring-jwt', 'ACCESS_TOKEN_TYPE_JWT');
  resource = await createApiApp(server, 'expiry');
});
afterAll(async () => {
  await server?.close();
});

describe('sign-in freshness', () => {
  let web: WebApp;
  let alice: Human;
  const REDIRECT = 'http://localhost:9999/callback';
  const authorizeUrl = (params: Record<string, string> = {}) =>
    `/oauth/v2/authorize?${new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 'st4te', ...params })}`;
  async function authTime(location: string): Promise<number> {
    const res = await fetch(`${server.url}/oauth/v2/token`, {
      method: 'POST',
      headers: { 'content-type': FORM, authorization: basic(web.clientId, web.clientSecret) },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: responseParams(location).get('code')!, redirect_uri: REDIRECT }).toString(),
    });
    expect(res.status).toBe(200);
    const { id_token } = (await res.json()) as { id_token: string };
    return JSON.parse(Buffer.from(id_token.split('.')[1]!, 'base64url').toString()).auth_time as number;
  }
  async function signedIn(agent = new Agent(server)): Promise<{ agent: Agent; authTime: number }> {
    const done = await signIn(agent, authorizeUrl({ prompt: 'login' }), alice);
    expect(done.location, done.html).toMatch(/^http:\/\/localhost:9999\/callback\?code=/);
    return { agent, authTime: await authTime(done.location!) };
  }

  beforeAll(async () => {
    web = await createWebApp(server);
    alice = await createHuman(server, { firstName: 'Alice' });
  });

  it('prompt=login: a new sign-in a second later moves auth_time by that second', async () => {
    const first = await signedIn();
    clock.advance(1000);
    const second = await signedIn(first.agent);
    expect(second.authTime).toBe(first.authTime + 1);
  });

  it('max_age: a session exactly max_age old still answers; one second older must sign in again', async () => {
    const { agent, authTime: signedInAt } = await signedIn();
    const ageNow = () => Math.floor(clock.now() / 1000) - signedInAt;
    clock.advance(600_000 - ageNow() * 1000);
    expect(ageNow()).toBe(600);
    const fresh = await agent.follow(authorizeUrl({ max_age: '600', prompt: 'none' }));
    expect(await authTime(fresh.location!)).toBe(signedInAt);
    clock.advance(1000);
    const stale = await agent.follow(authorizeUrl({ max_age: '600', prompt: 'none' }));
    expect(responseParams(stale.location!).get('error')).toBe('login_required');
    const page = await agent.follow(authorizeUrl({ max_age: '600' }));
    expect(page.html).toContain('action="/ui/login/password"');
  });
});

describe('signed assertions', () => {
  let app: { appId: string; clientId: string };
  let machine: { userId: string; keyId: string; key: KeyObject };
  const seconds = () => Math.floor(clock.now() / 1000);
  const sign = (key: KeyObject, header: Record<string, unknown>, claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader(header as any).sign(key);

  beforeAll(async () => {
    const created = await api(server, 'POST', `/management/v1/projects/${resource.projectId}/apps/api`, {
      token: server.pat,
      body: { name: 'keyed-resource', authMethodType: 'API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT' },
    });
    expect(created.status).toBe(200);
    app = { appId: created.body.appId, clientId: created.body.clientId };
    const user = await api(server, 'POST', '/management/v1/users/machine', {
      token: server.pat,
      body: { userName: 'keyed-service', name: 'Keyed service', accessTokenType: 'ACCESS_TOKEN_TYPE_JWT' },
    });
    const key = await api(server, 'POST', `/management/v1/users/${user.body.userId}/keys`, { token: server.pat, body: { type: 'KEY_TYPE_JSON' } });
    expect(key.status).toBe(200);
    const file = JSON.parse(Buffer.from(key.body.keyDetails, 'base64').toString()) as { keyId: string; key: string };
    machine = { userId: user.body.userId, keyId: file.keyId, key: createPrivateKey(file.key) };
  });

  it('refuses a client assertion signed with an app key once the key has expired', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const expires = clock.now() + 60_000;
    const added = await api(server, 'POST', `/management/v1/projects/${resource.projectId}/apps/${app.appId}/keys`, {
      token: server.pat,
      body: { type: 'KEY_TYPE_JSON', publicKey: Buffer.from(publicKey.export({ format: 'pem', type: 'spki' }).toString()).toString('base64'), expirationDate: new Date(expires).toISOString() },
    });
    expect(added.status).toBe(200);
    const introspect = async () => {
      const assertion = await sign(
        privateKey,
        { alg: 'EdDSA', kid: added.body.id },
        {
          iss: app.clientId,
          sub: app.clientId,
          aud: server.issuer,
          iat: seconds(),
          exp: seconds() + 60,
          jti: randomUUID(),
        },
      );
      const body = new URLSearchParams({ token: 'anything', client_id: app.clientId, client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer', client_assertion: assertion });
      return (await fetch(`${server.url}/oauth/v2/introspect`, { method: 'POST', headers: { 'content-type': FORM }, body })).status;
    };
    clock.advance(expires - 1 - clock.now());
    expect(await introspect()).toBe(200);
    clock.advance(1);
    expect(await introspect()).toBe(401);
  });

  it('keeps rejecting a replayed assertion through the leeway after exp, across a sweep', async () => {
    const exp = seconds() + 1;
    const assertion = await sign(machine.key, { alg: 'RS256', kid: machine.keyId }, { iss: machine.userId, sub: machine.userId, aud: server.issuer, iat: seconds(), exp, jti: randomUUID() });
    const grant = async () => {
      const res = await fetch(`${server.url}/oauth/v2/token`, {
        method: 'POST',
        headers: { 'content-type': FORM },
        body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion }).toString(),
      });
      return { status: res.status, body: (await res.json()) as Record<string, string> };
    };
    expect((await grant()).status).toBe(200);
    // The last instant the claims check still accepts the assertion (exp plus the 1 s leeway).
    clock.advance((exp + 1) * 1000 + 999 - clock.now());
    await server.tick();
    const replay = await grant();
    expect(replay.body.error).toBe('invalid_grant');
    expect(replay.body.error_description).toMatch(/already used/);
  });
});

describe('signing key rotation', () => {
  const kids = async () => ((await (await fetch(`${server.url}/oauth/v2/keys`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
  const signingKid = async () => decodeProtectedHeader(await token(jwt)).kid!;

  it('rotates once the interval has passed, to a key published before, and keeps the retired key published while its tokens live', async () => {
    // The key in use may have signed for a while already: rotate now to start a known interval.
    clock.advance(6 * HOUR);
    await server.tick();
    const first = await signingKid();
    const published = await kids();
    expect(published[0]).toBe(first);
    expect(published).toHaveLength(3); // active, next, and the key retired just now

    clock.advance(6 * HOUR - 1);
    await server.tick();
    expect(await signingKid()).toBe(first);

    clock.advance(1);
    await server.tick();
    const second = await signingKid();
    expect(second).not.toBe(first);
    expect(published).toContain(second);
    expect(await kids()).toContain(first);

    // Its tokens lived an hour: by the next rotation the retired key has left the JWKS.
    clock.advance(6 * HOUR);
    await server.tick();
    expect(await signingKid()).not.toBe(second);
    expect(await kids()).not.toContain(first);
    expect(await kids()).toContain(second);
  });
});

describe('access token expiry', () => {
  it('reports tokens inactive from the second their lifetime ends, and the sweep removes them from storage', async () => {
    const early = [await token(opaque), await token(jwt)];
    clock.advance(HOUR / 2);
    const late = await token(opaque);
    for (const t of [...early, late]) expect(await active(t)).toBe(true);
    // Lifetimes are whole seconds from the issuing second: one second short of an hour, still valid.
    clock.advance(HOUR / 2 - 1000 - (clock.now() % 1000));
    for (const t of early) expect(await active(t)).toBe(true);
    clock.advance(1000);
    for (const t of early) expect(await active(t)).toBe(false);
    expect(await active(late)).toBe(true);

    await server.tick();
    await server.stop();
    // Only the unexpired opaque token is left (JWTs are not stored).
    expect(await storedRecordCount(server.dataDir, 'tokens')).toBe(1);
  });
});
