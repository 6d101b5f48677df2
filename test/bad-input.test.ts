import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiApp, createMachineClient } from './helpers/api.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';

/**
 * Malformed requests across the endpoints: each gets a spec-shaped error with the right status,
 * never a 500 or a dropped connection, and the server keeps serving.
 */
let server: InProcessServer;
let machine: { clientId: string; clientSecret: string };
let app: { clientId: string; clientSecret: string };

const FORM = 'application/x-www-form-urlencoded';
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

beforeAll(async () => {
  server = await startInProcess();
  machine = await createMachineClient(server, 'bad-input-machine');
  app = await createApiApp(server, 'bad-input');
});
afterAll(async () => {
  await server?.close();
});

/** Sends a raw HTTP/1.1 request (for what fetch refuses to send, such as repeated headers). */
function raw(request: string | Buffer): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    // Written, not half-closed: an answer that takes a moment (one handed to the main thread) must
    // still reach a client that keeps its side open, as clients do; `Connection: close` ends it.
    const socket = connect(server.port, '127.0.0.1', () => socket.write(request));
    let data = '';
    socket.on('data', (d) => (data += d));
    socket.on('error', reject);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0);
      resolve({ status, body: data.slice(data.indexOf('\r\n\r\n') + 4) });
    });
  });
}

interface Case {
  name: string;
  path: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  status: number;
  /** Expected OAuth `error`, or ZITADEL gRPC `code`. */
  error?: string;
  code?: number;
}

const token = '/oauth/v2/token';
const introspect = '/oauth/v2/introspect';
const revoke = '/oauth/v2/revoke';

const cases = (): Case[] => {
  const auth = { authorization: basic(machine.clientId, machine.clientSecret) };
  const appAuth = { authorization: basic(app.clientId, app.clientSecret) };
  const bearer = { authorization: `Bearer ${server.pat}` };
  const json = { 'content-type': 'application/json', ...bearer };
  return [
    { name: 'token: JSON content type', path: token, headers: { 'content-type': 'application/json', ...auth }, body: '{"grant_type":"client_credentials"}', status: 400, error: 'invalid_request' },
    { name: 'token: no content type', path: token, headers: auth, body: 'grant_type=client_credentials', status: 400, error: 'invalid_request' },
    { name: 'token: missing grant_type', path: token, headers: { 'content-type': FORM, ...auth }, body: 'scope=openid', status: 400, error: 'invalid_request' },
    { name: 'token: unknown grant_type', path: token, headers: { 'content-type': FORM, ...auth }, body: 'grant_type=password', status: 400, error: 'unsupported_grant_type' },
    {
      name: 'token: repeated parameter',
      path: token,
      headers: { 'content-type': FORM, ...auth },
      body: 'grant_type=client_credentials&grant_type=client_credentials',
      status: 400,
      error: 'invalid_request',
    },
    { name: 'token: invalid UTF-8 body', path: token, headers: { 'content-type': FORM, ...auth }, body: Uint8Array.from([0x67, 0x3d, 0xc3, 0x28]), status: 400, error: 'invalid_request' },
    { name: 'token: invalid UTF-8 escape', path: token, headers: { 'content-type': FORM, ...auth }, body: 'grant_type=client_credentials&scope=%C3%28', status: 400, error: 'invalid_request' },
    { name: 'token: bad percent escape', path: token, headers: { 'content-type': FORM, ...auth }, body: 'grant_type=client%ZZcredentials', status: 400, error: 'invalid_request' },
    { name: 'token: malformed Basic header', path: token, headers: { 'content-type': FORM, authorization: 'Basic ***' }, body: 'grant_type=client_credentials', status: 400, error: 'invalid_request' },
    {
      name: 'token: Basic without colon',
      path: token,
      headers: { 'content-type': FORM, authorization: `Basic ${Buffer.from('justid').toString('base64')}` },
      body: 'grant_type=client_credentials',
      status: 400,
      error: 'invalid_request',
    },
    {
      name: 'token: two auth methods',
      path: token,
      headers: { 'content-type': FORM, ...auth },
      body: `grant_type=client_credentials&client_id=${encodeURIComponent(machine.clientId)}&client_secret=x`,
      status: 400,
      error: 'invalid_request',
    },
    {
      name: 'token: oversized body',
      path: token,
      headers: { 'content-type': FORM, ...auth },
      body: `grant_type=client_credentials&scope=${'a'.repeat(200_000)}`,
      status: 400,
      error: 'invalid_request',
    },
    { name: 'token: no client authentication', path: token, headers: { 'content-type': FORM }, body: 'grant_type=client_credentials', status: 401, error: 'invalid_client' },
    { name: 'token: unknown client', path: token, headers: { 'content-type': FORM, authorization: basic('nobody', 'x') }, body: 'grant_type=client_credentials', status: 401, error: 'invalid_client' },
    { name: 'token: scope with a quote', path: token, headers: { 'content-type': FORM, ...auth }, body: 'grant_type=client_credentials&scope=%22', status: 400, error: 'invalid_scope' },
    {
      name: 'token: bad client_assertion_type',
      path: token,
      headers: { 'content-type': FORM },
      body: 'grant_type=client_credentials&client_assertion=x&client_assertion_type=y',
      status: 400,
      error: 'invalid_request',
    },
    {
      name: 'token: too many parameters',
      path: token,
      headers: { 'content-type': FORM, ...auth },
      body: Array.from({ length: 100 }, (_, i) => `p${i}=1`).join('&'),
      status: 400,
      error: 'invalid_request',
    },
    { name: 'token: GET', path: token, method: 'GET', status: 405, error: 'invalid_request' },
    {
      name: 'token: DPoP header not a JWS',
      path: token,
      headers: { 'content-type': FORM, ...auth, dpop: 'not-a-proof' },
      body: 'grant_type=client_credentials',
      status: 400,
      error: 'invalid_dpop_proof',
    },
    {
      name: 'token: DPoP header of JSON garbage',
      path: token,
      headers: { 'content-type': FORM, ...auth, dpop: 'e30.bnVsbA.' },
      body: 'grant_type=client_credentials',
      status: 400,
      error: 'invalid_dpop_proof',
    },
    {
      name: 'token: oversized DPoP header',
      path: token,
      headers: { 'content-type': FORM, ...auth, dpop: `e30.${'A'.repeat(10_000)}.A` },
      body: 'grant_type=client_credentials',
      status: 400,
      error: 'invalid_dpop_proof',
    },
    { name: 'userinfo: DPoP scheme with an unknown token', path: '/oidc/v1/userinfo', method: 'GET', headers: { authorization: 'DPoP abc', dpop: 'x' }, status: 401, error: 'invalid_token' },
    { name: 'userinfo: DPoP scheme without a token', path: '/oidc/v1/userinfo', method: 'GET', headers: { authorization: 'DPoP' }, status: 401, error: 'invalid_token' },
    { name: 'introspect: no authentication', path: introspect, headers: { 'content-type': FORM }, body: 'token=x', status: 401, error: 'invalid_client' },
    { name: 'introspect: JSON body', path: introspect, headers: { 'content-type': 'application/json', ...appAuth }, body: '{"token":"x"}', status: 400, error: 'invalid_request' },
    { name: 'introspect: oversized token', path: introspect, headers: { 'content-type': FORM, ...appAuth }, body: `token=${'x'.repeat(100_000)}`, status: 400, error: 'invalid_request' },
    {
      name: 'device authorization: JSON body',
      path: '/oauth/v2/device_authorization',
      headers: { 'content-type': 'application/json' },
      body: '{"client_id":"x"}',
      status: 400,
      error: 'invalid_request',
    },
    {
      name: 'device authorization: unknown client',
      path: '/oauth/v2/device_authorization',
      headers: { 'content-type': FORM },
      body: 'client_id=nobody&scope=openid',
      status: 401,
      error: 'invalid_client',
    },
    { name: 'device authorization: a machine user', path: '/oauth/v2/device_authorization', headers: { 'content-type': FORM, ...auth }, body: 'scope=openid', status: 401, error: 'invalid_client' },
    {
      name: 'device authorization: an API app',
      path: '/oauth/v2/device_authorization',
      headers: { 'content-type': FORM, ...appAuth },
      body: 'scope=openid',
      status: 400,
      error: 'unauthorized_client',
    },
    { name: 'device authorization: GET', path: '/oauth/v2/device_authorization', method: 'GET', status: 405, error: 'invalid_request' },
    {
      name: 'token: device_code grant by a machine user',
      path: token,
      headers: { 'content-type': FORM, ...auth },
      body: 'grant_type=urn:ietf:params:oauth:grant-type:device_code&device_code=x',
      status: 401,
      error: 'invalid_client',
    },
    { name: 'revoke: missing token', path: revoke, headers: { 'content-type': FORM, ...auth }, body: 'token_type_hint=access_token', status: 400, error: 'invalid_request' },
    { name: 'revoke: no authentication', path: revoke, headers: { 'content-type': FORM }, body: 'token=x', status: 401, error: 'invalid_client' },
    {
      name: 'revoke: invalid UTF-8',
      path: revoke,
      headers: { 'content-type': FORM, ...auth },
      body: Uint8Array.from([0x74, 0x6f, 0x6b, 0x65, 0x6e, 0x3d, 0xff]),
      status: 400,
      error: 'invalid_request',
    },
    { name: 'management: bad JSON', path: '/management/v1/users/machine', headers: json, body: '{"userName":', status: 400, code: 3 },
    { name: 'management: JSON array body', path: '/management/v1/users/machine', headers: json, body: '[1,2]', status: 400, code: 3 },
    { name: 'management: wrong type', path: '/management/v1/users/machine', headers: json, body: '{"userName":123,"name":"x"}', status: 400, code: 3 },
    { name: 'management: missing field', path: '/management/v1/projects', headers: json, body: '{}', status: 400, code: 3 },
    { name: 'management: huge value', path: '/management/v1/users/machine', headers: json, body: JSON.stringify({ userName: 'u'.repeat(500), name: 'x' }), status: 400, code: 3 },
    {
      name: 'management: invalid UTF-8 JSON',
      path: '/management/v1/projects',
      headers: json,
      body: Uint8Array.from([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
      status: 400,
      code: 3,
    },
    { name: 'management: malformed bearer', path: '/management/v1/projects', headers: { 'content-type': 'application/json', authorization: 'Bearer' }, body: '{"name":"x"}', status: 401, code: 16 },
    { name: 'management: unknown user', path: '/management/v1/users/123456789', method: 'GET', headers: bearer, status: 404, code: 5 },
    { name: 'register: registration off', path: '/oauth/v2/register', headers: json, body: '{"redirect_uris":["https://a.example/cb"]}', status: 404, error: 'invalid_request' },
    { name: 'register: client URI, registration off', path: '/oauth/v2/register/123', method: 'GET', headers: bearer, status: 404, error: 'invalid_request' },
    { name: 'unknown route', path: '/nope', method: 'GET', status: 404, code: 5 },
  ];
};

describe('bad input', () => {
  it('answers each malformed request with the right error and keeps serving', async () => {
    const all = cases();
    expect(all.length).toBeGreaterThanOrEqual(25);
    for (const c of all) {
      const res = await fetch(server.issuer + c.path, { method: c.method ?? 'POST', headers: c.headers, body: c.body });
      const text = await res.text();
      expect({ name: c.name, status: res.status }).toEqual({ name: c.name, status: c.status });
      const body = JSON.parse(text);
      if (c.error) expect({ name: c.name, error: body.error }).toEqual({ name: c.name, error: c.error });
      if (c.error) expect(typeof body.error_description).toBe('string');
      if (c.code !== undefined) expect({ name: c.name, code: body.code }).toEqual({ name: c.name, code: c.code });
    }
    const discovery = await fetch(`${server.issuer}/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);
  });

  it('answers hostile registrations (RFC 7591) with 4xx and keeps serving', async () => {
    const me = await fetch(`${server.issuer}/management/v1/orgs/me`, { headers: { authorization: `Bearer ${server.pat}` } });
    const orgId = ((await me.json()) as { org: { id: string } }).org.id;
    const project = await fetch(`${server.issuer}/management/v1/projects`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.pat}` },
      body: JSON.stringify({ name: 'bad-input-registered' }),
    });
    const projectId = ((await project.json()) as { id: string }).id;
    const settings = (enabled: boolean) =>
      fetch(`${server.issuer}/admin/v1/settings/dynamic_client_registration`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${server.pat}` },
        body: JSON.stringify({ enabled, orgId, projectId }),
      });
    expect((await settings(true)).status).toBe(200);
    try {
      const json = { 'content-type': 'application/json', authorization: `Bearer ${server.pat}` };
      const hostile: Case[] = [
        { name: 'register: not JSON', path: '/oauth/v2/register', headers: json, body: 'redirect_uris=x', status: 400, error: 'invalid_client_metadata' },
        {
          name: 'register: invalid UTF-8',
          path: '/oauth/v2/register',
          headers: json,
          body: Uint8Array.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
          status: 400,
          error: 'invalid_client_metadata',
        },
        { name: 'register: a string', path: '/oauth/v2/register', headers: json, body: '"x"', status: 400, error: 'invalid_client_metadata' },
        { name: 'register: redirect_uris not a list', path: '/oauth/v2/register', headers: json, body: '{"redirect_uris":"https://a.example/cb"}', status: 400, error: 'invalid_redirect_uri' },
        { name: 'register: a number as a URI', path: '/oauth/v2/register', headers: json, body: '{"redirect_uris":[1]}', status: 400, error: 'invalid_redirect_uri' },
        { name: 'register: javascript: URI', path: '/oauth/v2/register', headers: json, body: '{"redirect_uris":["javascript:alert(1)//"]}', status: 400, error: 'invalid_redirect_uri' },
        {
          name: 'register: thousands of redirect URIs',
          path: '/oauth/v2/register',
          headers: json,
          body: JSON.stringify({ redirect_uris: Array.from({ length: 3000 }, (_, i) => `https://a.example/${i}`) }),
          status: 400,
          error: 'invalid_request',
        },
        {
          name: 'register: grant_types of objects',
          path: '/oauth/v2/register',
          headers: json,
          body: '{"redirect_uris":["https://a.example/cb"],"grant_types":[{}]}',
          status: 400,
          error: 'invalid_client_metadata',
        },
        {
          name: 'register: jwks of garbage',
          path: '/oauth/v2/register',
          headers: json,
          body: '{"redirect_uris":["https://a.example/cb"],"token_endpoint_auth_method":"private_key_jwt","jwks":{"keys":[{"kty":"RSA","kid":"k","n":"!!","e":"AQAB"}]}}',
          status: 400,
          error: 'invalid_client_metadata',
        },
        {
          name: 'register: bearer of garbage',
          path: '/oauth/v2/register',
          headers: { 'content-type': 'application/json', authorization: 'Bearer ***' },
          body: '{}',
          status: 401,
          error: 'invalid_token',
        },
        { name: 'register: PUT without token', path: '/oauth/v2/register/123', method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}', status: 401, error: 'invalid_token' },
        { name: 'register: unknown client', path: '/oauth/v2/register/123', method: 'DELETE', headers: { authorization: 'Bearer abc' }, status: 401, error: 'invalid_token' },
      ];
      for (const c of hostile) {
        const res = await fetch(server.issuer + c.path, { method: c.method ?? 'POST', headers: c.headers, body: c.body });
        const body = JSON.parse(await res.text());
        expect({ name: c.name, status: res.status, error: body.error }).toEqual({ name: c.name, status: c.status, error: c.error });
      }
    } finally {
      expect((await settings(false)).status).toBe(200);
    }
  });

  it('rejects a repeated Authorization header', async () => {
    const body = 'grant_type=client_credentials';
    const res = await raw(
      `POST /oauth/v2/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${FORM}\r\n` +
        `Authorization: ${basic(machine.clientId, machine.clientSecret)}\r\nAuthorization: ${basic('x', 'y')}\r\n` +
        `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).error).toBe('invalid_request');
  });

  it('rejects two DPoP headers', async () => {
    const body = 'grant_type=client_credentials';
    const res = await raw(
      `POST /oauth/v2/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${FORM}\r\n` +
        `Authorization: ${basic(machine.clientId, machine.clientSecret)}\r\nDPoP: a.b.c\r\nDPoP: d.e.f\r\n` +
        `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).error).toBe('invalid_dpop_proof');
  });

  it('rejects a body larger than its declared limit even when sent chunked', async () => {
    const chunk = 'a'.repeat(70_000);
    const res = await raw(
      `POST /oauth/v2/token HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${FORM}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n` + `${chunk.length.toString(16)}\r\n${chunk}\r\n0\r\n\r\n`,
    );
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).error).toBe('invalid_request');
    const discovery = await fetch(`${server.issuer}/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);
  });
});

describe('CORS for browser apps', () => {
  it('lets any origin read discovery and the JWKS, and answers preflights', async () => {
    for (const path of ['/oauth/v2/keys', '/.well-known/openid-configuration']) {
      const preflight = await fetch(server.url + path, {
        method: 'OPTIONS',
        headers: { origin: 'https://spa.example', 'access-control-request-method': 'GET' },
      });
      expect({ path, status: preflight.status }).toEqual({ path, status: 204 });
      expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
      const res = await fetch(server.url + path, { headers: { origin: 'https://spa.example' } });
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
    }
  });

  // Registered origins are allowed: test/trust.test.ts.
  it('does not answer the token-based endpoints for an origin no app registers', async () => {
    for (const path of ['/oauth/v2/token', '/oauth/v2/introspect', '/oauth/v2/revoke', '/oidc/v1/userinfo']) {
      const preflight = await fetch(server.url + path, {
        method: 'OPTIONS',
        headers: { origin: 'https://spa.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
      });
      expect({ path, status: preflight.status }).toEqual({ path, status: 204 });
      expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
      expect(preflight.headers.get('vary')).toMatch(/Origin/);
      // A registered browser app may send DPoP proofs (RFC 9449 §4.1).
      expect(preflight.headers.get('access-control-allow-headers')).toMatch(/\bDPoP\b/);
    }
    const failed = await fetch(`${server.url}/oauth/v2/token`, { method: 'POST', headers: { origin: 'https://spa.example', 'content-type': FORM }, body: 'grant_type=x' });
    expect(failed.status).toBe(400);
    expect(failed.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('keeps cookie-based and admin endpoints same-origin', async () => {
    for (const path of ['/oauth/v2/authorize', '/management/v1/projects']) {
      const res = await fetch(server.url + path, { method: 'OPTIONS', headers: { origin: 'https://evil.example' } });
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
    }
  });
});
