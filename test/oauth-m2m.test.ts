import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { api, createApiApp, createMachineClient } from './helpers/api.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';

/**
 * Machine-to-machine flows with a standard relying-party library (openid-client): discovery,
 * client_credentials (Basic and post, opaque and JWT), introspection, revocation, key rotation.
 */
let server: InProcessServer;
let opaqueClient: { userId: string; clientId: string; clientSecret: string };
let jwtClient: { userId: string; clientId: string; clientSecret: string };
let resource: { projectId: string; clientId: string; clientSecret: string };
let otherResource: { projectId: string; clientId: string; clientSecret: string };

const discover = (clientId: string, secret: string, auth: 'basic' | 'post' = 'basic') =>
  oidc.discovery(new URL(server.issuer), clientId, secret, auth === 'basic' ? oidc.ClientSecretBasic(secret) : oidc.ClientSecretPost(secret), { execute: [oidc.allowInsecureRequests] });

beforeAll(async () => {
  server = await startInProcess({ env: { SESAME_SIGNING_ALG: 'ES256' } });
  opaqueClient = await createMachineClient(server, 'svc-opaque');
  jwtClient = await createMachineClient(server, 'svc-jwt', 'ACCESS_TOKEN_TYPE_JWT');
  resource = await createApiApp(server, 'orders');
  otherResource = await createApiApp(server, 'billing');
});

afterAll(async () => {
  await server?.close();
});

const audScope = (projectId: string) => `urn:zitadel:iam:org:project:id:${projectId}:aud`;

describe('discovery', () => {
  it('serves a document openid-client accepts, with every implemented endpoint', async () => {
    const config = await discover(opaqueClient.clientId, opaqueClient.clientSecret);
    const meta = config.serverMetadata();
    expect(meta.issuer).toBe(server.issuer);
    expect(meta.token_endpoint).toBe(`${server.issuer}/oauth/v2/token`);
    expect(meta.introspection_endpoint).toBe(`${server.issuer}/oauth/v2/introspect`);
    expect(meta.revocation_endpoint).toBe(`${server.issuer}/oauth/v2/revoke`);
    expect(meta.jwks_uri).toBe(`${server.issuer}/oauth/v2/keys`);
    expect(meta.grant_types_supported).toContain('client_credentials');
    expect(meta.id_token_signing_alg_values_supported).toEqual(['ES256']);
  });

  it('serves the same document as OAuth authorization server metadata (RFC 8414), which oauth2 discovery accepts', async () => {
    const oauth2 = await oidc.discovery(new URL(server.issuer), opaqueClient.clientId, opaqueClient.clientSecret, oidc.ClientSecretBasic(opaqueClient.clientSecret), {
      execute: [oidc.allowInsecureRequests],
      algorithm: 'oauth2',
    });
    expect(oauth2.serverMetadata().token_endpoint).toBe(`${server.issuer}/oauth/v2/token`);
    const [rfc8414, openid] = await Promise.all(['oauth-authorization-server', 'openid-configuration'].map((name) => fetch(`${server.url}/.well-known/${name}`)));
    expect(rfc8414!.headers.get('access-control-allow-origin')).toBe('*');
    expect(await rfc8414!.json()).toEqual(await openid!.json());
  });
});

describe('client_credentials', () => {
  it('issues an opaque token via client_secret_basic', async () => {
    const config = await discover(opaqueClient.clientId, opaqueClient.clientSecret, 'basic');
    const tokens = await oidc.clientCredentialsGrant(config, { scope: `profile ${audScope(resource.projectId)} unknown:scope` });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.access_token.split('.')).toHaveLength(1);
    expect(tokens.access_token.length).toBeGreaterThanOrEqual(43);
    expect(tokens.expires_in).toBe(12 * 3600);
    expect(tokens.scope).toBe(`profile ${audScope(resource.projectId)}`);
    expect(tokens.id_token).toBeUndefined();
    expect(tokens.refresh_token).toBeUndefined();
  });

  it('issues an RFC 9068 JWT via client_secret_post that verifies against the JWKS', async () => {
    const config = await discover(jwtClient.clientId, jwtClient.clientSecret, 'post');
    const tokens = await oidc.clientCredentialsGrant(config, { scope: `openid offline_access ${audScope(resource.projectId)}` });
    expect(tokens.id_token).toBeUndefined();
    expect(tokens.refresh_token).toBeUndefined();
    const jwks = createRemoteJWKSet(new URL(`${server.issuer}/oauth/v2/keys`));
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, {
      issuer: server.issuer,
      audience: resource.projectId,
      typ: 'at+jwt',
    });
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload.sub).toBe(jwtClient.userId);
    expect(payload.client_id).toBe(jwtClient.clientId);
    expect(typeof payload.jti).toBe('string');
    expect(payload.exp! - payload.iat!).toBe(12 * 3600);
    // openid stays granted (ZITADEL; a later token exchange may return an ID token), offline_access does not.
    expect(payload.scope).toBe(`openid ${audScope(resource.projectId)}`);
  });

  it('rejects a wrong secret with 401 invalid_client and WWW-Authenticate for Basic', async () => {
    const res = await fetch(`${server.issuer}/oauth/v2/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(opaqueClient.clientId)}:wrong`).toString('base64')}`,
      },
      body: 'grant_type=client_credentials',
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect(await res.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('rejects an audience scope naming an unknown project', async () => {
    const config = await discover(opaqueClient.clientId, opaqueClient.clientSecret);
    await expect(oidc.clientCredentialsGrant(config, { scope: audScope('404404') })).rejects.toMatchObject({
      error: 'invalid_scope',
    });
  });
});

describe('introspection', () => {
  const introspector = () => discover(resource.clientId, resource.clientSecret);

  it('reports an opaque and a JWT token active for a client in the audience', async () => {
    for (const machine of [opaqueClient, jwtClient]) {
      const config = await discover(machine.clientId, machine.clientSecret);
      const { access_token } = await oidc.clientCredentialsGrant(config, { scope: `profile ${audScope(resource.projectId)}` });
      const result = await oidc.tokenIntrospection(await introspector(), access_token);
      expect(result).toMatchObject({
        active: true,
        client_id: machine.clientId,
        sub: machine.userId,
        iss: server.issuer,
        token_type: 'Bearer',
        username: machine.clientId,
        aud: [resource.projectId],
        scope: `profile ${audScope(resource.projectId)}`,
      });
      expect(result.name).toBeDefined();
      expect(result.exp).toBeGreaterThan(server.clock.now() / 1000); // the server's clock, not the machine's
      expect(result.nbf).toBe(result.iat);
      expect(typeof result.jti).toBe('string');
    }
  });

  it('reports inactive when the caller is not in the audience', async () => {
    const config = await discover(opaqueClient.clientId, opaqueClient.clientSecret);
    const { access_token } = await oidc.clientCredentialsGrant(config, { scope: audScope(resource.projectId) });
    const other = await discover(otherResource.clientId, otherResource.clientSecret);
    expect(await oidc.tokenIntrospection(other, access_token)).toEqual({ active: false });
  });

  it('reports inactive for garbage and forged tokens', async () => {
    const config = await introspector();
    expect(await oidc.tokenIntrospection(config, 'not-a-token')).toEqual({ active: false });
    const jwtConfig = await discover(jwtClient.clientId, jwtClient.clientSecret);
    const { access_token } = await oidc.clientCredentialsGrant(jwtConfig, { scope: audScope(resource.projectId) });
    const [h, p] = access_token.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, sub: 'someone-else' })).toString('base64url')}.${access_token.split('.')[2]}`;
    expect(await oidc.tokenIntrospection(config, forged)).toEqual({ active: false });
  });

  it('answers 401 invalid_client to a caller with a wrong secret', async () => {
    const res = await fetch(`${server.issuer}/oauth/v2/introspect`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${resource.clientId}:nope`).toString('base64')}`,
      },
      body: 'token=abc',
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('takes the client methods discovery lists for introspection, Basic and private_key_jwt (as ZITADEL), not a secret in the form', async () => {
    const doc = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as Record<string, string[]>;
    expect(doc.introspection_endpoint_auth_methods_supported).toEqual(['client_secret_basic', 'private_key_jwt']);
    const res = await fetch(`${server.issuer}/oauth/v2/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: 'abc', client_id: resource.clientId, client_secret: resource.clientSecret }).toString(),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('does not let a machine user introspect', async () => {
    const config = await discover(opaqueClient.clientId, opaqueClient.clientSecret);
    // 401 with a Basic challenge (RFC 6749 §5.2), which openid-client surfaces as a challenge error.
    await expect(oidc.tokenIntrospection(config, 'x')).rejects.toMatchObject({ status: 401, cause: [{ scheme: 'basic' }] });
  });
});

describe('revocation', () => {
  it('revokes opaque and JWT tokens so introspection reports them inactive at once', async () => {
    const introspector = await discover(resource.clientId, resource.clientSecret);
    for (const machine of [opaqueClient, jwtClient]) {
      const config = await discover(machine.clientId, machine.clientSecret);
      const { access_token } = await oidc.clientCredentialsGrant(config, { scope: audScope(resource.projectId) });
      expect((await oidc.tokenIntrospection(introspector, access_token)).active).toBe(true);
      await oidc.tokenRevocation(config, access_token);
      expect(await oidc.tokenIntrospection(introspector, access_token)).toEqual({ active: false });
      // Revoking again, or revoking garbage, is still 200.
      await oidc.tokenRevocation(config, access_token);
      await oidc.tokenRevocation(config, 'garbage-token');
    }
  });

  it("refuses to revoke another client's token", async () => {
    const owner = await discover(opaqueClient.clientId, opaqueClient.clientSecret);
    const { access_token } = await oidc.clientCredentialsGrant(owner, { scope: audScope(resource.projectId) });
    const intruder = await discover(jwtClient.clientId, jwtClient.clientSecret);
    await expect(oidc.tokenRevocation(intruder, access_token)).rejects.toMatchObject({ status: 401 });
    const raw = await fetch(`${server.issuer}/oauth/v2/revoke`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(jwtClient.clientId)}:${jwtClient.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ token: access_token }).toString(),
    });
    expect(raw.status).toBe(401);
    expect(await raw.json()).toMatchObject({ error: 'invalid_client', error_description: 'token was not issued for this client' });
    const introspector = await discover(resource.clientId, resource.clientSecret);
    expect((await oidc.tokenIntrospection(introspector, access_token)).active).toBe(true);
  });
});

describe('signing key rotation', () => {
  it('publishes the next key ahead, signs with it after rotation, keeps old tokens verifiable', async () => {
    const jwksUrl = `${server.issuer}/oauth/v2/keys`;
    const before = (await (await fetch(jwksUrl)).json()) as { keys: { kid: string; alg: string; use: string }[] };
    expect(before.keys.length).toBeGreaterThanOrEqual(2);
    for (const key of before.keys) expect(key).toMatchObject({ alg: 'ES256', use: 'sig' });
    const jwksResponse = await fetch(jwksUrl);
    expect(jwksResponse.headers.get('cache-control')).toMatch(/max-age=\d+/);

    const config = await discover(jwtClient.clientId, jwtClient.clientSecret);
    const old = await oidc.clientCredentialsGrant(config, { scope: audScope(resource.projectId) });
    const oldKid = decodeProtectedHeader(old.access_token).kid!;
    expect(before.keys[0]!.kid).toBe(oldKid);
    const nextKid = before.keys[1]!.kid;

    const forbidden = await api(server, 'POST', '/admin/v1/keys/_rotate', {});
    expect(forbidden.status).toBe(401);
    const rotated = await api(server, 'POST', '/admin/v1/keys/_rotate', { token: server.pat });
    expect(rotated.status).toBe(200);
    expect(rotated.body.kid).toBe(nextKid);

    const fresh = await oidc.clientCredentialsGrant(config, { scope: audScope(resource.projectId) });
    expect(decodeProtectedHeader(fresh.access_token).kid).toBe(nextKid);

    const jwks = createRemoteJWKSet(new URL(jwksUrl));
    await jwtVerify(old.access_token, jwks, { issuer: server.issuer });
    await jwtVerify(fresh.access_token, jwks, { issuer: server.issuer });
    const introspector = await discover(resource.clientId, resource.clientSecret);
    expect((await oidc.tokenIntrospection(introspector, old.access_token)).active).toBe(true);
  });
});
