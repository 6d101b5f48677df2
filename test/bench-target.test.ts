import { afterAll, describe, expect, it } from 'vitest';
import { parseBenchArgs } from '../bench/args.js';
import { introspectOpaque } from '../bench/scenarios/introspect.js';
import { SesameFactory } from '../bench/targets/sesame.js';
import { basicAuth, fetchToken, type PreparedTarget } from '../bench/targets/target.js';

/**
 * The bench suite's provisioning: the Sesame target it starts has working clients for every
 * scenario, so a scenario never measures a stream of errors.
 */
const factory = new SesameFactory(parseBenchArgs(['--workers', '1']));
afterAll(async () => {
  await factory.close();
});

async function post(_target: PreparedTarget, url: string, auth: string, body: string) {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: auth }, body });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('bench Sesame target', () => {
  it('provisions clients that get tokens, introspect them and exchange them', async () => {
    const target = await factory.open('ES256');
    expect(target.endpoints.token).toBe(`${target.issuer}/oauth/v2/token`);
    const opaque = await fetchToken(target, target.ccOpaque!);
    const jwt = await fetchToken(target, target.ccJwt!);
    expect(opaque.split('.')).toHaveLength(1);
    expect(jwt.split('.')).toHaveLength(3);
    for (const token of [opaque, jwt]) {
      const res = await post(target, target.endpoints.introspection, basicAuth(target.introspector!), `token=${encodeURIComponent(token)}`);
      expect(res.body.active).toBe(true);
    }
    const exchanged = await post(
      target,
      target.endpoints.token,
      basicAuth(target.exchange!.client),
      `grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Atoken-exchange&subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token&subject_token=${opaque}`,
    );
    expect(exchanged.status).toBe(200);
    expect(target.signIn?.cookie).toBeTruthy();
    expect(target.jwtProfile?.keyId).toBeTruthy();
  });

  it('prepares a scenario plan that cycles through real tokens', async () => {
    const target = await factory.open('ES256');
    if (!('plan' in introspectOpaque)) throw new Error('introspect-opaque is an autocannon scenario');
    const plan = await introspectOpaque.plan(target, { duration: 1 });
    expect('requests' in plan).toBe(true);
    if (!('requests' in plan)) return;
    const request = plan.requests[0]!;
    const body = request.setupRequest!({}).body!;
    const res = await post(target, target.issuer + request.path, request.headers!.authorization!, body);
    expect(res.body.active).toBe(true);
  }, 60_000);
});
