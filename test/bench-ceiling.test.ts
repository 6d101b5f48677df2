import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCeiling, type Ceiling } from '../bench/targets/ceiling-server.js';
import { revoke } from '../bench/scenarios/revoke.js';
import { basicAuth, discoverEndpoints, type PreparedTarget } from '../bench/targets/target.js';

/**
 * The bench's ceiling (bench/targets/ceiling-server.ts) is only a fair limit if it does each
 * scenario's work for real: tokens it issues introspect as active, revoked ones as inactive, a
 * wrong secret is refused, and its JWTs verify against its JWKS.
 */
let ceiling: Ceiling;
let target: PreparedTarget;

beforeAll(async () => {
  ceiling = await startCeiling('flush');
  const client = (id: string) => ({ id, secret: ceiling.secret });
  target = {
    name: 'ceiling',
    issuer: ceiling.issuer,
    endpoints: await discoverEndpoints(ceiling.issuer),
    ccOpaque: { client: client(ceiling.clients.opaque), body: 'grant_type=client_credentials&scope=openid' },
    ccJwt: { client: client(ceiling.clients.jwt.ES256), body: 'grant_type=client_credentials&scope=openid' },
    introspector: client(ceiling.clients.introspect),
    notes: [],
  };
});

afterAll(async () => {
  await ceiling?.close();
});

async function post(url: string, auth: string, body: string) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth }, body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}
const token = async (request = target.ccOpaque!) => (await post(target.endpoints.token, basicAuth(request.client), request.body)).body.access_token as string;
const introspect = (value: string) => post(target.endpoints.introspection, basicAuth(target.introspector!), `token=${encodeURIComponent(value)}`);

describe('bench ceiling', () => {
  it('issues opaque tokens that introspect active until revoked by their client', async () => {
    const opaque = await token();
    expect(opaque).toMatch(/^[\w-]{43}$/);
    expect((await introspect(opaque)).body).toMatchObject({ active: true, client_id: ceiling.clients.opaque, iss: ceiling.issuer });
    expect((await introspect('not-a-token')).body).toEqual({ active: false });
    // Another client cannot revoke it (a token client, so the ownership check is what refuses); its own can.
    const other = { id: ceiling.clients.jwt.ES256, secret: ceiling.secret };
    expect((await post(target.endpoints.revocation, basicAuth(other), `token=${opaque}`)).status).toBe(200);
    expect((await introspect(opaque)).body.active).toBe(true);
    expect((await post(target.endpoints.revocation, basicAuth(target.ccOpaque!.client), `token=${opaque}`)).status).toBe(200);
    expect((await introspect(opaque)).body).toEqual({ active: false });
  });

  it('refuses a wrong secret and an unknown grant', async () => {
    const wrong = await post(target.endpoints.token, basicAuth({ id: ceiling.clients.opaque, secret: 'wrong' }), 'grant_type=client_credentials');
    expect(wrong).toEqual({ status: 401, body: { error: 'invalid_client' } });
    const grant = await post(target.endpoints.token, basicAuth(target.ccOpaque!.client), 'grant_type=password');
    expect(grant.status).toBe(400);
  });

  it('signs JWTs with every algorithm, verifiable with its JWKS', async () => {
    const jwks = createLocalJWKSet((await (await fetch(target.endpoints.jwks)).json()) as { keys: [] });
    for (const alg of ['RS256', 'ES256', 'EdDSA'] as const) {
      const jwt = await token({ client: { id: ceiling.clients.jwt[alg], secret: ceiling.secret }, body: 'grant_type=client_credentials' });
      const { payload, protectedHeader } = await jwtVerify(jwt, jwks, { issuer: ceiling.issuer });
      expect(protectedHeader.alg).toBe(alg);
      expect(payload.client_id).toBe(ceiling.clients.jwt[alg]);
    }
  });

  it('revoke plans one request per live token, sized to the run', async () => {
    if (!('plan' in revoke)) throw new Error('revoke is an autocannon scenario');
    const plan = await revoke.plan(target, { duration: 0.01 });
    if (!('requests' in plan)) throw new Error(plan.skip);
    expect(plan.amount).toBe(50);
    const bodies = new Set(Array.from({ length: plan.amount! }, () => plan.requests[0]!.setupRequest!({}).body));
    expect(bodies.size).toBe(50);
  });
});
