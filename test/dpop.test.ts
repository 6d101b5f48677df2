import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import * as oauth from 'oauth4webapi';
import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import { api, basicAuth, createMachineClient } from './helpers/api.js';
import { Connection, connectionsOnEveryThread } from './helpers/connection.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { Agent, createHuman, createWebApp, signIn, type Human, type WebApp } from './helpers/oidc.js';

/**
 * DPoP (RFC 9449) with the real client libraries: openid-client's DPoP handle through a public
 * client's code flow, refresh and userinfo; oauth4webapi's through client_credentials and the
 * server-nonce retry. Tokens are bound (`token_type: DPoP`, `cnf.jkt` in JWTs and introspection),
 * a public client's refresh token to the key, and hostile proofs get `invalid_dpop_proof`. Time is
 * the test clock's: proofs the test signs itself are dated by it.
 */
const REDIRECT = 'http://localhost:9999/callback';
const INSECURE = { [oauth.allowInsecureRequests]: true } as const;

let server: InProcessServer;
let web: WebApp;
let publicApp: WebApp;
let person: Human;
let introspector: { clientId: string; clientSecret: string };
let machine: { clientId: string; clientSecret: string };
let jwtMachine: { clientId: string; clientSecret: string };

beforeAll(async () => {
  // The libraries date their proofs by the system clock: the server's follows it (and can still be moved).
  server = await startInProcess({ clock: TestClock.followingSystem(), env: { SESAME_FEATURE_TOKEN_EXCHANGE: 'true' } });
  web = await createWebApp(server, { accessTokenType: 'OIDC_TOKEN_TYPE_JWT' });
  publicApp = await createWebApp(server, {
    projectId: web.projectId,
    appType: 'OIDC_APP_TYPE_NATIVE',
    authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
    accessTokenType: 'OIDC_TOKEN_TYPE_JWT',
    skipNativeAppSuccessPage: true,
  });
  person = await createHuman(server);
  const app = await api(server, 'POST', `/management/v1/projects/${web.projectId}/apps/api`, {
    token: server.pat,
    body: { name: 'dpop-introspector', authMethodType: 'API_AUTH_METHOD_TYPE_BASIC' },
  });
  introspector = { clientId: app.body.clientId, clientSecret: app.body.clientSecret };
  machine = await createMachineClient(server, 'dpop-machine');
  jwtMachine = await createMachineClient(server, 'dpop-jwt-machine', 'ACCESS_TOKEN_TYPE_JWT');
});
afterAll(async () => {
  await server?.close();
});

const audience = () => `urn:zitadel:iam:org:project:id:${web.projectId}:aud`;

async function introspect(token: string): Promise<Record<string, any>> {
  const res = await fetch(`${server.url}/oauth/v2/introspect`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basicAuth(introspector.clientId, introspector.clientSecret) },
    body: new URLSearchParams({ token }).toString(),
  });
  return (await res.json()) as Record<string, any>;
}

/** A key pair for proofs the test signs itself, with its public JWK and thumbprint. */
async function proofKey(alg = 'ES256') {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(publicKey);
  return { alg, privateKey, jwk, privateJwk: await exportJWK(privateKey), jkt: await calculateJwkThumbprint(jwk) };
}
type ProofKey = Awaited<ReturnType<typeof proofKey>>;

/** A proof dated by the server's clock (unless `iat` is given); `header` adds or replaces header parameters. */
function proof(key: ProofKey, claims: Record<string, unknown>, header: Record<string, unknown> = {}): Promise<string> {
  return (
    new SignJWT({ jti: randomUUID(), iat: Math.floor(server.clock.now() / 1000), ...claims })
      .setProtectedHeader({ alg: key.alg, typ: 'dpop+jwt', jwk: key.jwk as JWK, ...header })
      // jose signs a critical extension only when told it is understood.
      .sign(key.privateKey, Array.isArray(header.crit) ? { crit: Object.fromEntries(header.crit.map((name: string) => [name, true])) } : {})
  );
}

const tokenProof = (key: ProofKey, claims: Record<string, unknown> = {}, header: Record<string, unknown> = {}) =>
  proof(key, { htm: 'POST', htu: `${server.issuer}/oauth/v2/token`, ...claims }, header);

/** client_credentials as `who` with the given DPoP header value(s). */
function machineToken(c: Connection, dpop: string | string[] | undefined, who = machine) {
  return c.post('/oauth/v2/token', basicAuth(who.clientId, who.clientSecret), { grant_type: 'client_credentials', scope: audience() }, dpop === undefined ? {} : { dpop });
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('DPoP at the token endpoint and introspection', () => {
  it('discovery lists the proof algorithms', async () => {
    const doc = (await (await fetch(`${server.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    expect(doc.dpop_signing_alg_values_supported).toEqual(['RS256', 'ES256', 'EdDSA']);
  });

  it('oauth4webapi client_credentials with a DPoP handle: a DPoP token, bound in introspection (opaque) and in the JWT', async () => {
    const as = await oauth.processDiscoveryResponse(new URL(server.issuer), await oauth.discoveryRequest(new URL(server.issuer), { algorithm: 'oidc', ...INSECURE }));
    const keyPair = await oauth.generateKeyPair('ES256');
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey));
    for (const who of [machine, jwtMachine]) {
      const client: oauth.Client = { client_id: who.clientId };
      const DPoP = oauth.DPoP(client, keyPair);
      const response = await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretBasic(who.clientSecret), new URLSearchParams({ scope: audience() }), { DPoP, ...INSECURE });
      const tokens = await oauth.processClientCredentialsResponse(as, client, response);
      expect(tokens.token_type).toBe('dpop');
      expect(await introspect(tokens.access_token)).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt } });
      if (who === jwtMachine) expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt });
    }
    // Without a proof: Bearer, no cnf.
    const plain = await machineToken(new Connection(server.port), undefined);
    expect(plain.body.token_type).toBe('Bearer');
    expect(await introspect(plain.body.access_token)).not.toHaveProperty('cnf');
  });

  it('openid-client, public client: code flow → DPoP token; refresh bound to the key; userinfo with a proof; Bearer use refused', async () => {
    const config = await oidc.discovery(new URL(server.issuer), publicApp.clientId, {}, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const keyPair = await oidc.randomDPoPKeyPair('ES256');
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey));
    const DPoP = oidc.getDPoPHandle(config, keyPair);
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid profile offline_access',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const done = await signIn(new Agent(server), url.pathname + url.search, person);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.location!), { pkceCodeVerifier: verifier, idTokenExpected: true }, undefined, { DPoP });
    expect(tokens.token_type).toBe('dpop');
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt });
    expect(await introspect(tokens.access_token)).toMatchObject({ active: true, token_type: 'DPoP', cnf: { jkt } });

    // userinfo: with a proof of the key (openid-client adds ath), and refused as Bearer.
    const info = await oidc.fetchUserInfo(config, tokens.access_token, person.userId, { DPoP });
    expect(info.sub).toBe(person.userId);
    const asBearer = await fetch(`${server.url}/oidc/v1/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(asBearer.status).toBe(401);
    expect(asBearer.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_token"/);

    // The refresh token is bound: another key and no proof are refused, and do not spend it.
    const otherKey = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: otherKey })).rejects.toMatchObject({ error: 'invalid_dpop_proof' });
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_dpop_proof' });
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
    expect(refreshed.token_type).toBe('dpop');
    expect(decodeJwt(refreshed.access_token).cnf).toEqual({ jkt });
    const again = await oidc.refreshTokenGrant(config, refreshed.refresh_token!, undefined, { DPoP });
    expect(again.token_type).toBe('dpop');
  });

  it('binds the code at the authorization endpoint: dpop_jkt, or a proof at the push (RFC 9449 §10)', async () => {
    const config = await oidc.discovery(new URL(server.issuer), publicApp.clientId, {}, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    const other = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    const signInWith = async (build: (params: Record<string, string>) => Promise<URL>) => {
      const verifier = oidc.randomPKCECodeVerifier();
      const url = await build({ redirect_uri: REDIRECT, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
      const done = await signIn(new Agent(server), url.pathname + url.search, person);
      return { location: new URL(done.location!), verifier };
    };

    // dpop_jkt in the authorization request: only a proof of that key redeems the code, and a wrong one does not spend it.
    const jkt = await DPoP.calculateThumbprint();
    const direct = await signInWith(async (params) => oidc.buildAuthorizationUrl(config, { ...params, dpop_jkt: jkt }));
    await expect(oidc.authorizationCodeGrant(config, direct.location, { pkceCodeVerifier: direct.verifier })).rejects.toMatchObject({ error: 'invalid_grant' });
    await expect(oidc.authorizationCodeGrant(config, direct.location, { pkceCodeVerifier: direct.verifier }, undefined, { DPoP: other })).rejects.toMatchObject({ error: 'invalid_grant' });
    const tokens = await oidc.authorizationCodeGrant(config, direct.location, { pkceCodeVerifier: direct.verifier }, undefined, { DPoP });
    expect(tokens.token_type).toBe('dpop');

    // A proof at the pushed authorization request binds the code to its key.
    const pushed = await signInWith((params) => oidc.buildAuthorizationUrlWithPAR(config, params, { DPoP }));
    await expect(oidc.authorizationCodeGrant(config, pushed.location, { pkceCodeVerifier: pushed.verifier }, undefined, { DPoP: other })).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await oidc.authorizationCodeGrant(config, pushed.location, { pkceCodeVerifier: pushed.verifier }, undefined, { DPoP })).token_type).toBe('dpop');

    // A malformed dpop_jkt is an error sent back to the client.
    const bad = await fetch(
      `${server.url}/oauth/v2/authorize?${new URLSearchParams({ client_id: publicApp.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256', dpop_jkt: 'short' })}`,
      { redirect: 'manual' },
    );
    expect(new URL(bad.headers.get('location')!).searchParams.get('error')).toBe('invalid_request');
  });

  it("a confidential client's refresh token is not bound; its access tokens are, per request", async () => {
    const config = await oidc.discovery(new URL(server.issuer), web.clientId, web.clientSecret, oidc.ClientSecretBasic(web.clientSecret), { execute: [oidc.allowInsecureRequests] });
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid offline_access',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const done = await signIn(new Agent(server), url.pathname + url.search, person);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(done.location!), { pkceCodeVerifier: verifier, idTokenExpected: true }, undefined, { DPoP });
    expect(tokens.token_type).toBe('dpop');
    const unbound = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(unbound.token_type).toBe('bearer');
    expect(decodeJwt(unbound.access_token)).not.toHaveProperty('cnf');
  });

  it('an app with dpopBoundAccessTokens gets tokens only with a proof; the setting is shown and exported', async () => {
    const strict = await createWebApp(server, { projectId: web.projectId, dpopBoundAccessTokens: true });
    const shown = await api(server, 'GET', `/management/v1/projects/${strict.projectId}/apps/${strict.appId}`, { token: server.pat });
    expect(shown.body.app.oidcConfig.dpopBoundAccessTokens).toBe(true);
    const config = await oidc.discovery(new URL(server.issuer), strict.clientId, strict.clientSecret, oidc.ClientSecretBasic(strict.clientSecret), { execute: [oidc.allowInsecureRequests] });
    const signInFor = async () => {
      const verifier = oidc.randomPKCECodeVerifier();
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
      const done = await signIn(new Agent(server), url.pathname + url.search, person);
      return { location: new URL(done.location!), verifier };
    };
    const first = await signInFor();
    await expect(oidc.authorizationCodeGrant(config, first.location, { pkceCodeVerifier: first.verifier })).rejects.toMatchObject({ error: 'invalid_dpop_proof' });
    const second = await signInFor();
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
    const tokens = await oidc.authorizationCodeGrant(config, second.location, { pkceCodeVerifier: second.verifier }, undefined, { DPoP });
    expect(tokens.token_type).toBe('dpop');

    const exported = await api(server, 'POST', '/admin/v1/export', { token: server.pat, body: { org_ids: [], with_passwords: false, with_otp: false } });
    const apps = (exported.body.orgs as { oidcApps?: { appId: string; app: Record<string, unknown> }[] }[]).flatMap((o) => o.oidcApps ?? []);
    expect(apps.find((a) => a.appId === strict.appId)?.app.dpopBoundAccessTokens).toBe(true);

    // The implicit flow hands its access token to the browser unbound: refused with the setting.
    await expect(
      createWebApp(server, {
        projectId: web.projectId,
        dpopBoundAccessTokens: true,
        responseTypes: ['OIDC_RESPONSE_TYPE_CODE', 'OIDC_RESPONSE_TYPE_ID_TOKEN_TOKEN'],
        grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_IMPLICIT'],
      }),
    ).rejects.toThrow(/implicit flow/);
  });

  it('token exchange: a DPoP-bound subject token is exchanged only with a proof of its key, and the result is bound', async () => {
    const exchanger = await createWebApp(server, { projectId: web.projectId, grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE', 'OIDC_GRANT_TYPE_TOKEN_EXCHANGE'] });
    const key = await proofKey();
    const c = new Connection(server.port);
    try {
      const bound = (await machineToken(c, await tokenProof(key))).body.access_token as string;
      const exchange = (dpop?: string) =>
        c.post(
          '/oauth/v2/token',
          basicAuth(exchanger.clientId, exchanger.clientSecret),
          { grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: bound, subject_token_type: 'urn:ietf:params:oauth:token-type:access_token' },
          dpop ? { dpop } : {},
        );
      expect((await exchange()).body).toMatchObject({ error: 'invalid_request', error_description: expect.stringMatching(/DPoP-bound/) });
      expect((await exchange(await tokenProof(await proofKey()))).body).toMatchObject({ error: 'invalid_request' });
      const exchanged = await exchange(await tokenProof(key));
      expect(exchanged.body, JSON.stringify(exchanged.body)).toMatchObject({ token_type: 'DPoP' });
      expect(await introspect(exchanged.body.access_token)).toMatchObject({ active: true, cnf: { jkt: key.jkt } });
    } finally {
      c.close();
    }
  });

  it('hostile proofs: every one refused with 400 invalid_dpop_proof, never a 5xx', async () => {
    const key = await proofKey();
    const rsa = await proofKey('RS256');
    const c = new Connection(server.port);
    const header = { alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk };
    const payload = () => ({ jti: randomUUID(), htm: 'POST', htu: `${server.issuer}/oauth/v2/token`, iat: Math.floor(server.clock.now() / 1000) });
    const replayed = await tokenProof(key);
    const offCurve = { ...key.jwk, y: key.jwk.x };
    const hostile: [string, string | string[]][] = [
      ['replayed (first use)', replayed],
      ['wrong htm', await tokenProof(key, { htm: 'GET' })],
      ['wrong htu', await tokenProof(key, { htu: `${server.issuer}/oauth/v2/introspect` })],
      ['other host in htu', await tokenProof(key, { htu: 'https://attacker.example/oauth/v2/token' })],
      ['a private key in its header', await tokenProof(key, {}, { jwk: key.privateJwk })],
      ['alg none', `${b64({ ...header, alg: 'none' })}.${b64(payload())}.`],
      ['HS256', await new SignJWT(payload()).setProtectedHeader({ alg: 'HS256', typ: 'dpop+jwt', jwk: key.jwk as JWK }).sign(new Uint8Array(32))],
      ['typ JWT', await tokenProof(key, {}, { typ: 'JWT' })],
      ['crit', await tokenProof(key, {}, { crit: ['x-ext'], 'x-ext': 1 })],
      ['no jwk', await tokenProof(key, {}, { jwk: undefined })],
      ['jwk of another curve for ES256', await tokenProof(key, {}, { jwk: rsa.jwk })],
      ['a point off the curve', await tokenProof(key, {}, { jwk: offCurve })],
      ['signed by another key', await tokenProof(rsa, {}, { alg: 'RS256', jwk: (await proofKey('RS256')).jwk })],
      ['no jti', await tokenProof(key, { jti: undefined })],
      ['no iat', await tokenProof(key, { iat: undefined })],
      ['not a JWS', 'not.a-jws'],
      ['oversized', `${b64(header)}.${'A'.repeat(9000)}.sig`],
      ['two DPoP headers', [await tokenProof(key), await tokenProof(key)]],
    ];
    try {
      expect((await machineToken(c, replayed)).status).toBe(200);
      for (const [name, value] of hostile) {
        const res = await machineToken(c, value);
        expect(res.status, name).toBe(400);
        expect(res.body.error, `${name}: ${res.body.error_description}`).toBe('invalid_dpop_proof');
      }
    } finally {
      c.close();
    }
  });

  it('a DPoP-bound token with the management audience is no bearer token for the management API', async () => {
    const key = await proofKey();
    const c = new Connection(server.port);
    try {
      const res = await c.post(
        '/oauth/v2/token',
        basicAuth(machine.clientId, machine.clientSecret),
        { grant_type: 'client_credentials', scope: 'urn:zitadel:iam:org:project:id:zitadel:aud' },
        { dpop: await tokenProof(key) },
      );
      expect(res.body.token_type).toBe('DPoP');
      const asBearer = await fetch(`${server.url}/management/v1/orgs/me`, { headers: { authorization: `Bearer ${res.body.access_token}` } });
      expect(asBearer.status).toBe(401);
      expect(((await asBearer.json()) as { message: string }).message).toContain('DPoP-bound');
      // The same client's bearer token still works there.
      const plain = await c.post('/oauth/v2/token', basicAuth(machine.clientId, machine.clientSecret), { grant_type: 'client_credentials', scope: 'urn:zitadel:iam:org:project:id:zitadel:aud' });
      expect((await fetch(`${server.url}/management/v1/orgs/me`, { headers: { authorization: `Bearer ${plain.body.access_token}` } })).status).not.toBe(401);
    } finally {
      c.close();
    }
  });

  it('userinfo: a proof must name the token (ath), use GET/POST as sent, and be fresh; errors carry a DPoP challenge', async () => {
    const key = await proofKey();
    const c = new Connection(server.port);
    try {
      const issued = await machineToken(c, await tokenProof(key));
      expect(issued.body.token_type).toBe('DPoP');
      const token = issued.body.access_token as string;
      const ath = Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token))).toString('base64url');
      const at = (claims: Record<string, unknown>) => proof(key, { htm: 'POST', htu: `${server.issuer}/oidc/v1/userinfo`, ath, ...claims });
      const userinfo = (dpop: string | undefined, authorization = `DPoP ${token}`) => c.post('/oidc/v1/userinfo', authorization, {}, dpop ? { dpop } : {});

      const ok = await at({});
      expect((await userinfo(ok)).status).toBe(200);
      const refusals: [string, string | undefined, string][] = [
        ['replayed', ok, 'invalid_dpop_proof'],
        ['bad ath', await at({ ath: 'A'.repeat(43) }), 'invalid_dpop_proof'],
        ['no ath', await at({ ath: undefined }), 'invalid_dpop_proof'],
        ['wrong htm', await at({ htm: 'GET' }), 'invalid_dpop_proof'],
        ['no proof', undefined, 'invalid_dpop_proof'],
        ['another key', await proof(await proofKey(), { htm: 'POST', htu: `${server.issuer}/oidc/v1/userinfo`, ath }), 'invalid_dpop_proof'],
      ];
      for (const [name, dpop, error] of refusals) {
        const res = await userinfo(dpop);
        expect(res.status, name).toBe(401);
        expect(res.body.error, name).toBe(error);
        expect(res.headers['www-authenticate'], name).toMatch(new RegExp(`^DPoP error="${error}".*algs="RS256 ES256 EdDSA"`));
      }
      // A description quoting the proof (its crit) can neither close the quoted string nor break the header line.
      const hostileHeader = { alg: 'x"\r\nSet-Cookie: injected=1', typ: 'dpop+jwt', jwk: key.jwk };
      const hostileClaims = { jti: randomUUID(), iat: Math.floor(server.clock.now() / 1000), htm: 'POST', htu: `${server.issuer}/oidc/v1/userinfo`, ath };
      const splitting = await userinfo(`${b64(hostileHeader)}.${b64(hostileClaims)}.AAAA`);
      expect(splitting.status).toBe(401);
      expect(splitting.headers['set-cookie']).toBeUndefined();
      expect(splitting.headers['www-authenticate']).toMatch(/^DPoP error="invalid_dpop_proof", error_description="[^"\r\n]*", algs="RS256 ES256 EdDSA"$/);
      // An unbound token under the DPoP scheme is refused too.
      const plain = await machineToken(c, undefined);
      const unbound = await c.post('/oidc/v1/userinfo', `DPoP ${plain.body.access_token}`, {}, { dpop: await at({}) });
      expect(unbound.status).toBe(401);
      expect(unbound.body.error).toBe('invalid_token');
      // No token: both challenges.
      const none = await c.post('/oidc/v1/userinfo', undefined, {});
      expect(none.headers['www-authenticate']).toBe('Bearer realm="sesame", DPoP algs="RS256 ES256 EdDSA"');
    } finally {
      c.close();
    }
  });

  it('htu is compared without query and fragment; iat may be up to 60 s off either way', async () => {
    const key = await proofKey();
    const c = new Connection(server.port);
    // Exact boundaries: the clock stands still meanwhile (and is left 61 s ahead: this test comes last).
    server.clock.follows = false;
    try {
      const now = Math.floor(server.clock.now() / 1000);
      expect((await machineToken(c, await tokenProof(key, { htu: `${server.issuer}/oauth/v2/token?x=1#f` }))).body.token_type).toBe('DPoP');
      expect((await machineToken(c, await tokenProof(key, { iat: now + 60 }))).status).toBe(200);
      expect((await machineToken(c, await tokenProof(key, { iat: now - 60 }))).status).toBe(200);
      expect((await machineToken(c, await tokenProof(key, { iat: now + 61 }))).body).toMatchObject({ error: 'invalid_dpop_proof', error_description: expect.stringMatching(/future/) });
      expect((await machineToken(c, await tokenProof(key, { iat: now - 61 }))).body).toMatchObject({ error: 'invalid_dpop_proof', error_description: expect.stringMatching(/old/) });
      // The clock moves: a proof made now is too old 61 s later.
      const made = await tokenProof(key);
      server.clock.advance(61_000);
      expect((await machineToken(c, made)).body.error).toBe('invalid_dpop_proof');
    } finally {
      server.clock.follows = true;
      c.close();
    }
  });
});

describe('DPoP on two HTTP threads, tokens signed in the pool', () => {
  it('SESAME_SIGNER=pool: acceptor threads hand DPoP requests over whole (a proof is not spent before): fresh proofs taken everywhere, one proof once', async () => {
    const threaded = await startInProcess({ env: { SESAME_HTTP_THREADS: '2', SESAME_SIGNER: 'pool' } });
    // Four connections on each thread: both threads take fresh proofs and race for the one proof.
    const connections = await connectionsOnEveryThread(threaded.port, () => threaded.app.requestsPerThread(), 4);
    try {
      const before = await threaded.app.requestsPerThread();
      const who = await createMachineClient(threaded, 'dpop-pool-machine', 'ACCESS_TOKEN_TYPE_JWT');
      const key = await proofKey();
      const make = () =>
        new SignJWT({ jti: randomUUID(), htm: 'POST', htu: `${threaded.issuer}/oauth/v2/token`, iat: Math.floor(threaded.clock.now() / 1000) })
          .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk as JWK })
          .sign(key.privateKey);
      const ask = (c: Connection, dpop: string) => c.post('/oauth/v2/token', basicAuth(who.clientId, who.clientSecret), { grant_type: 'client_credentials' }, { dpop });
      const fresh = await Promise.all(connections.map(async (c) => ask(c, await make())));
      for (const r of fresh) expect(r, JSON.stringify(r.body)).toMatchObject({ status: 200, body: { token_type: 'DPoP' } });
      for (const r of fresh) expect(decodeJwt(r.body.access_token).cnf).toEqual({ jkt: key.jkt });
      const once = await make();
      const answers = await Promise.all(connections.map((c) => ask(c, once)));
      expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
      for (const r of answers.filter((a) => a.status !== 200)) expect(r.body.error).toBe('invalid_dpop_proof');
      const after = await threaded.app.requestsPerThread();
      // Each thread took its connections' 8 token requests (and the client's creation went to either).
      expect(after[0]! - before[0]!).toBeGreaterThanOrEqual(8);
      expect(after[1]! - before[1]!).toBeGreaterThanOrEqual(8);
    } finally {
      for (const c of connections) c.close();
      await threaded.close();
    }
  });
});

describe('DPoP server nonces', () => {
  it('SESAME_DPOP_REQUIRE_NONCE=true: use_dpop_nonce with a DPoP-Nonce, oauth4webapi retries; the nonce rotates, the previous one still taken', async () => {
    const clock = new TestClock();
    const strict = await startInProcess({ clock, env: { SESAME_DPOP_REQUIRE_NONCE: 'true' } });
    try {
      const who = await createMachineClient(strict, 'dpop-nonce-machine');
      const as = await oauth.processDiscoveryResponse(new URL(strict.issuer), await oauth.discoveryRequest(new URL(strict.issuer), { algorithm: 'oidc', ...INSECURE }));
      const client: oauth.Client = { client_id: who.clientId };
      // The client dates its proofs by the server's clock (which stands still and is moved below).
      const DPoP = oauth.DPoP(client, await oauth.generateKeyPair('ES256'), {
        [oauth.modifyAssertion]: (_header, payload) => void (payload.iat = Math.floor(clock.now() / 1000)),
      });
      const grant = async () => {
        const response = await oauth.clientCredentialsGrantRequest(as, client, oauth.ClientSecretBasic(who.clientSecret), new URLSearchParams(), { DPoP, ...INSECURE });
        return oauth.processClientCredentialsResponse(as, client, response);
      };
      const withRetry = async () => {
        try {
          return { retried: false, tokens: await grant() };
        } catch (error) {
          if (!oauth.isDPoPNonceError(error)) throw new Error(`not a nonce error: ${JSON.stringify((error as { cause?: unknown }).cause)}`);
          return { retried: true, tokens: await grant() };
        }
      };
      // First: no nonce yet, refused with one; the retry carries it.
      const first = await withRetry();
      expect(first.retried).toBe(true);
      expect(first.tokens.token_type).toBe('dpop');
      // Within the period: the handle's nonce is taken at once.
      expect((await withRetry()).retried).toBe(false);
      // One rotation later the previous nonce is still taken (each answer hands out the current one).
      clock.advance(5 * 60_000);
      expect((await withRetry()).retried).toBe(false);
      // Two rotations without a request: the handle's nonce is too old; refused, then retried.
      clock.advance(10 * 60_000);
      expect((await withRetry()).retried).toBe(true);

      // Raw: the error carries the nonce header.
      const key = await proofKey();
      const raw = await fetch(`${strict.url}/oauth/v2/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: basicAuth(who.clientId, who.clientSecret),
          dpop: await new SignJWT({ jti: randomUUID(), htm: 'POST', htu: `${strict.issuer}/oauth/v2/token`, iat: Math.floor(clock.now() / 1000), nonce: 'stale' })
            .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk as JWK })
            .sign(key.privateKey),
        },
        body: 'grant_type=client_credentials',
      });
      expect(raw.status).toBe(400);
      expect(await raw.json()).toMatchObject({ error: 'use_dpop_nonce' });
      expect(raw.headers.get('dpop-nonce')).toMatch(/^[A-Za-z0-9_-]{32}$/);
    } finally {
      await strict.close();
    }
  });
});

describe('DPoP off', () => {
  it('SESAME_FEATURE_DPOP=false: not in discovery, the header ignored (Bearer tokens), an app cannot require it', async () => {
    const off = await startInProcess({ env: { SESAME_FEATURE_DPOP: 'false' } });
    try {
      const doc = (await (await fetch(`${off.url}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      expect(doc).not.toHaveProperty('dpop_signing_alg_values_supported');
      const who = await createMachineClient(off, 'dpop-off-machine');
      const key = await proofKey();
      const dpop = await new SignJWT({ jti: randomUUID(), htm: 'POST', htu: `${off.issuer}/oauth/v2/token`, iat: Math.floor(off.clock.now() / 1000) })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk as JWK })
        .sign(key.privateKey);
      const c = new Connection(off.port);
      try {
        const res = await c.post('/oauth/v2/token', basicAuth(who.clientId, who.clientSecret), { grant_type: 'client_credentials' }, { dpop });
        expect(res.body.token_type).toBe('Bearer');
        // Not even a garbage header is looked at.
        expect((await c.post('/oauth/v2/token', basicAuth(who.clientId, who.clientSecret), { grant_type: 'client_credentials' }, { dpop: 'garbage' })).status).toBe(200);
      } finally {
        c.close();
      }
      await expect(createWebApp(off, { dpopBoundAccessTokens: true })).rejects.toThrow(/DPoP is turned off/);
    } finally {
      await off.close();
    }
  });
});
