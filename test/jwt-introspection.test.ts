import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrivateKey, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { api } from './helpers/api.js';
import { connectionsOnEveryThread, type Connection } from './helpers/connection.js';
import * as oauth from 'oauth4webapi';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { createApiApp, createMachineClient, basicAuth } from './helpers/api.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';

/**
 * JWT responses for token introspection (RFC 9701; issue 14): oauth4webapi asks with its Accept
 * header and checks the signed answer (typ, iss, aud, iat, signature); jose verifies it against
 * the JWKS; without the header, and with the feature off, the answer stays JSON.
 */
let server: InProcessServer;
let resource: { clientId: string; clientSecret: string; projectId: string };
let as: oauth.AuthorizationServer;
const INSECURE = { [oauth.allowInsecureRequests]: true } as const;

beforeAll(async () => {
  server = await startInProcess();
  resource = await createApiApp(server, 'jwt-introspection');
  as = await oauth.processDiscoveryResponse(new URL(server.issuer), await oauth.discoveryRequest(new URL(server.issuer), { algorithm: 'oidc', ...INSECURE }));
});
afterAll(async () => {
  await server?.close();
});

async function tokenFor(projectId: string): Promise<string> {
  const machine = await createMachineClient(server, `jwt-introspect-${Math.random().toString(36).slice(2)}`);
  const res = await fetch(`${server.url}/oauth/v2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(machine.clientId, machine.clientSecret) },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: `urn:zitadel:iam:org:project:id:${projectId}:aud` }).toString(),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

const introspect = (token: string, requestJwtResponse: boolean) =>
  oauth.introspectionRequest(as, { client_id: resource.clientId }, oauth.ClientSecretBasic(resource.clientSecret), token, { ...INSECURE, requestJwtResponse });

describe('JWT introspection responses (RFC 9701)', () => {
  it('answers a signed token-introspection+jwt that oauth4webapi and jose accept', async () => {
    expect(as.introspection_signing_alg_values_supported).toEqual(['RS256']);
    const token = await tokenFor(resource.projectId);
    const res = await introspect(token, true);
    expect(res.headers.get('content-type')).toBe('application/token-introspection+jwt');
    const jwt = await res.clone().text();
    const body = await oauth.processIntrospectionResponse(as, { client_id: resource.clientId }, res);
    expect(body).toMatchObject({ active: true, aud: expect.arrayContaining([resource.projectId]) });
    const { payload, protectedHeader } = await jwtVerify(jwt, createRemoteJWKSet(new URL(`${server.url}/oauth/v2/keys`)), {
      issuer: server.issuer,
      audience: resource.clientId,
      typ: 'token-introspection+jwt',
      currentDate: new Date(server.clock.now()),
    });
    expect(protectedHeader.typ).toBe('token-introspection+jwt');
    expect(payload.token_introspection).toEqual(body);
    expect(payload).not.toHaveProperty('exp');

    const inactive = await oauth.processIntrospectionResponse(as, { client_id: resource.clientId }, await introspect('not-a-token', true));
    expect(inactive).toEqual({ active: false });
    // Without the Accept header: JSON, as before.
    const plain = await introspect(token, false);
    expect(plain.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('SESAME_FEATURE_JWT_INTROSPECTION=false: JSON whatever is asked, and nothing in discovery', async () => {
    const off = await startInProcess({ env: { SESAME_FEATURE_JWT_INTROSPECTION: 'false' } });
    try {
      const doc = (await (await fetch(`${off.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      expect(doc).not.toHaveProperty('introspection_signing_alg_values_supported');
      const app = await createApiApp(off, 'jwt-introspection-off');
      const res = await fetch(`${off.url}/oauth/v2/introspect`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/token-introspection+jwt', authorization: basicAuth(app.clientId, app.clientSecret) },
        body: 'token=x',
      });
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({ active: false });
    } finally {
      await off.close();
    }
  });
});

describe('JWT introspection on two HTTP threads, tokens signed in the pool', () => {
  it('SESAME_SIGNER=pool: a caller authenticated by private_key_jwt gets its signed answer on every connection (the assertion is not spent before the request is handed over)', async () => {
    const threaded = await startInProcess({ env: { SESAME_HTTP_THREADS: '2', SESAME_SIGNER: 'pool' } });
    const connections = await connectionsOnEveryThread(threaded.port, () => threaded.app.requestsPerThread(), 4);
    try {
      const project = await api(threaded, 'POST', '/management/v1/projects', { token: threaded.pat, body: { name: 'pool-introspection' } });
      const app = await api(threaded, 'POST', `/management/v1/projects/${project.body.id}/apps/api`, {
        token: threaded.pat,
        body: { name: 'rs', authMethodType: 'API_AUTH_METHOD_TYPE_PRIVATE_KEY_JWT' },
      });
      const key = await api(threaded, 'POST', `/management/v1/projects/${project.body.id}/apps/${app.body.appId}/keys`, { token: threaded.pat, body: { type: 'KEY_TYPE_JSON' } });
      const file = JSON.parse(Buffer.from(key.body.keyDetails, 'base64').toString()) as { keyId: string; key: string };
      const privateKey = createPrivateKey(file.key);
      const clientId = app.body.clientId as string;
      const assertion = () => {
        const now = Math.floor(threaded.clock.now() / 1000);
        return new SignJWT({ iss: clientId, sub: clientId, aud: threaded.issuer, iat: now, exp: now + 60, jti: randomUUID() }).setProtectedHeader({ alg: 'RS256', kid: file.keyId }).sign(privateKey);
      };
      const ask = async (c: Connection, accept: string) => {
        const payload = new URLSearchParams({
          token: 'anything',
          client_id: clientId,
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: await assertion(),
        }).toString();
        return c.send('POST', '/oauth/v2/introspect', { 'content-type': 'application/x-www-form-urlencoded', accept, 'content-length': String(Buffer.byteLength(payload)) }, payload);
      };
      for (const r of await Promise.all(connections.map((c) => ask(c, 'application/json')))) expect(r.status, r.text).toBe(200);
      const signed = await Promise.all(connections.map((c) => ask(c, 'application/token-introspection+jwt')));
      for (const r of signed) {
        expect(r.status, r.text).toBe(200);
        expect(r.headers['content-type']).toContain('application/token-introspection+jwt');
      }
    } finally {
      for (const c of connections) c.close();
      await threaded.close();
    }
  });
});
