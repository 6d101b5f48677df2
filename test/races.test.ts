import { rmSync } from 'node:fs';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from './helpers/api.js';
import { startInProcess, TestClock, type InProcessServer } from './helpers/in-process.js';
import { base32Encode, totpAt } from '../src/crypto/totp.js';
import { Agent, createHuman, createWebApp, responseParams, signIn, submit, uniqueName, type Human, type WebApp } from './helpers/oidc.js';

/**
 * Races over real HTTP against one in-process server (real LMDB, real worker pool, a clock that
 * stands still): one authorization code redeemed by several requests at once, one refresh token
 * used by several requests at once (without and with a reuse grace window), parallel wrong
 * passwords against the lockout policy's limit, and signing key rotations while tokens are issued. Every request of a race is in flight before any
 * answer is read; the assertions hold for every order in which the server may take them.
 */
const REDIRECT = 'http://localhost:9999/callback';
const FORM = 'application/x-www-form-urlencoded';
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
const errorText = (html: string | undefined) => /<p class="error" role="alert">([^<]*)<\/p>/.exec(html ?? '')?.[1];

interface Fixture {
  server: InProcessServer;
  web: WebApp;
  person: Human;
  introspector: { clientId: string; clientSecret: string };
}

async function fixture(env: Record<string, string> = {}): Promise<Fixture> {
  const server = await startInProcess({ clock: new TestClock(), env });
  const web = await createWebApp(server);
  const person = await createHuman(server);
  const app = await api(server, 'POST', `/management/v1/projects/${web.projectId}/apps/api`, {
    token: server.pat,
    body: { name: 'introspector', authMethodType: 'API_AUTH_METHOD_TYPE_BASIC' },
  });
  expect(app.status).toBe(200);
  return { server, web, person, introspector: { clientId: app.body.clientId, clientSecret: app.body.clientSecret } };
}

async function tokenRequest(f: Fixture, body: Record<string, string>): Promise<{ status: number; body: Record<string, string> }> {
  const res = await fetch(`${f.server.url}/oauth/v2/token`, {
    method: 'POST',
    headers: { 'content-type': FORM, authorization: basic(f.web.clientId, f.web.clientSecret) },
    body: new URLSearchParams(body).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

async function active(f: Fixture, token: string): Promise<boolean> {
  const res = await fetch(`${f.server.url}/oauth/v2/introspect`, {
    method: 'POST',
    headers: { 'content-type': FORM, authorization: basic(f.introspector.clientId, f.introspector.clientSecret) },
    body: new URLSearchParams({ token }).toString(),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { active: boolean }).active;
}

/** A browser sign-in up to the redirect with the code (not redeemed). */
async function code(f: Fixture): Promise<string> {
  const params = new URLSearchParams({ client_id: f.web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid offline_access' });
  const done = await signIn(new Agent(f.server), `/oauth/v2/authorize?${params}`, f.person);
  expect(done.location, done.html).toMatch(/code=/);
  return responseParams(done.location!).get('code')!;
}

const redeem = (f: Fixture, c: string) => tokenRequest(f, { grant_type: 'authorization_code', code: c, redirect_uri: REDIRECT });
const refresh = (f: Fixture, token: string) => tokenRequest(f, { grant_type: 'refresh_token', refresh_token: token });

/** Tokens of a freshly redeemed code. */
async function tokens(f: Fixture): Promise<Record<string, string>> {
  const res = await redeem(f, await code(f));
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.refresh_token).toBeDefined();
  return res.body;
}

describe('without a refresh reuse grace window', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture();
  });
  afterAll(async () => {
    await f?.server.close();
  });

  it.each([2, 4])('one code redeemed by %i requests at once: exactly one gets tokens, the others invalid_grant; the replay revokes them', async (n) => {
    const c = await code(f);
    const answers = await Promise.all(Array.from({ length: n }, () => redeem(f, c)));
    const won = answers.filter((a) => a.status === 200);
    const lost = answers.filter((a) => a.status !== 200);
    expect(won).toHaveLength(1);
    expect(lost.map((a) => [a.status, a.body.error])).toEqual(Array(n - 1).fill([400, 'invalid_grant']));
    // RFC 6749 §4.1.2: a second use of a code revokes what the first use issued.
    const issued = won[0]!.body;
    expect(await active(f, issued.access_token!)).toBe(false);
    expect(await refresh(f, issued.refresh_token!)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // And the code stays spent.
    expect(await redeem(f, c)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it.each([2, 4])('one refresh token used by %i requests at once: one rotation; the others are reuse, which revokes the whole grant', async (n) => {
    const first = await tokens(f);
    expect(await active(f, first.access_token!)).toBe(true);
    const answers = await Promise.all(Array.from({ length: n }, () => refresh(f, first.refresh_token!)));
    const rotated = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    expect(rotated, JSON.stringify(answers.map((a) => a.body))).toHaveLength(1);
    expect(refused.map((a) => [a.status, a.body.error])).toEqual(Array(n - 1).fill([400, 'invalid_grant']));
    // The family is revoked: neither the successor nor the old token refreshes, no access token of the grant is active.
    const successor = rotated[0]!.body;
    expect(successor.refresh_token).not.toBe(first.refresh_token);
    expect(await refresh(f, successor.refresh_token!)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await refresh(f, first.refresh_token!)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await active(f, successor.access_token!)).toBe(false);
    expect(await active(f, first.access_token!)).toBe(false);
  });

  it('a refresh token used and revoked at once: whichever comes first, no token of the grant works afterwards', async () => {
    for (let round = 0; round < 3; round++) {
      const first = await tokens(f);
      const revoke = fetch(`${f.server.url}/oauth/v2/revoke`, {
        method: 'POST',
        headers: { 'content-type': FORM, authorization: basic(f.web.clientId, f.web.clientSecret) },
        body: new URLSearchParams({ token: first.refresh_token!, token_type_hint: 'refresh_token' }).toString(),
      });
      const [used, revoked] = await Promise.all([refresh(f, first.refresh_token!), revoke]);
      expect(revoked.status).toBe(200);
      // The refresh may have come first (200, with tokens revoked right after) or second (invalid_grant).
      expect([200, 400]).toContain(used.status);
      const issued = [first.access_token!, ...(used.status === 200 ? [used.body.access_token!] : [])];
      for (const t of issued) expect(await active(f, t)).toBe(false);
      for (const t of [first.refresh_token!, ...(used.status === 200 ? [used.body.refresh_token!] : [])]) {
        expect(await refresh(f, t)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      }
    }
  });

  it('a refresh token used once at a time rotates and the family lives on (the races above are what revoke it)', async () => {
    const first = await tokens(f);
    const second = await refresh(f, first.refresh_token!);
    expect(second.status).toBe(200);
    const third = await refresh(f, second.body.refresh_token!);
    expect(third.status).toBe(200);
    expect(await active(f, third.body.access_token!)).toBe(true);
  });

  describe('parallel wrong passwords against the lockout limit', () => {
    async function personLockedAfter(maxPasswordAttempts: number, options: { maxOtpAttempts?: number; otpSecret?: string } = {}): Promise<{ orgId: string; person: Human }> {
      const org = await api(f.server, 'POST', '/management/v1/orgs', { token: f.server.pat, body: { name: uniqueName('org') } });
      expect(org.status).toBe(200);
      const orgId = org.body.id as string;
      const policy = await api(f.server, 'POST', '/management/v1/policies/lockout', {
        token: f.server.pat,
        orgId,
        body: { maxPasswordAttempts: String(maxPasswordAttempts), ...(options.maxOtpAttempts ? { maxOtpAttempts: String(options.maxOtpAttempts) } : {}), showLockoutFailure: true },
      });
      expect(policy.status, JSON.stringify(policy.body)).toBe(200);
      return { orgId, person: await createHuman(f.server, { orgId, ...(options.otpSecret ? { otpSecret: options.otpSecret } : {}) }) };
    }

    /** A browser of its own at the password step of `person`. */
    async function atPassword(person: Human) {
      const agent = new Agent(f.server);
      const params = new URLSearchParams({ client_id: f.web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid' });
      const first = await agent.follow(`/oauth/v2/authorize?${params}`);
      const page = await submit(agent, first, '/ui/login/loginname', { loginName: person.loginName });
      expect(page.html).toContain('action="/ui/login/password"');
      return { agent, page };
    }

    it.each([
      { limit: 1, parallel: 6 },
      { limit: 3, parallel: 8 },
    ])('limit $limit, $parallel wrong passwords at once: locked at exactly the limit; the right password is refused afterwards', async ({ limit, parallel }) => {
      const { orgId, person } = await personLockedAfter(limit);
      const browsers = await Promise.all(Array.from({ length: parallel }, () => atPassword(person)));
      const answers = await Promise.all(browsers.map(({ agent, page }, i) => submit(agent, page, '/ui/login/password', { password: `wrong-${i}` })));
      const texts = answers.map((a) => errorText(a.html) ?? `no error: ${a.status} ${a.location ?? ''}`);
      // Every check up to the limit was a real one: limit - 1 say "wrong", the one at the limit and
      // every later one say "locked" (they are not checked against the hash, nor counted).
      expect(texts.filter((t) => /wrong/.test(t))).toHaveLength(limit - 1);
      expect(texts.filter((t) => /locked/.test(t))).toHaveLength(parallel - limit + 1);
      const user = (await f.server.app.ctx.orgs.storedUser(person.userId))!;
      expect(user.state).toBe('USER_STATE_LOCKED');
      expect(user.human!.failedPasswordAttempts).toBe(limit);
      expect((await api(f.server, 'GET', `/management/v1/users/${person.userId}`, { token: f.server.pat, orgId })).body.user.state).toBe('USER_STATE_LOCKED');

      // The right password now: refused, in a browser that raced and in a new one, and not counted.
      const raced = await submit(browsers[0]!.agent, answers[0]!, '/ui/login/password', { password: person.password });
      expect(errorText(raced.html)).toMatch(/locked/);
      const fresh = await atPassword(person);
      const after = await submit(fresh.agent, fresh.page, '/ui/login/password', { password: person.password });
      expect(after.location).toBeUndefined();
      expect(errorText(after.html)).toMatch(/locked/);
      expect((await f.server.app.ctx.orgs.storedUser(person.userId))!.human!.failedPasswordAttempts).toBe(limit);
    });

    it('maxOtpAttempts 3, 6 wrong TOTP codes at once from 6 signed-in browsers: locked at exactly the limit', async () => {
      const secret = base32Encode(Buffer.from('race-otp-secret-0001'));
      const { person } = await personLockedAfter(10, { maxOtpAttempts: 3, otpSecret: secret });
      const browsers = await Promise.all(Array.from({ length: 6 }, () => atPassword(person)));
      const atOtp = [];
      for (const { agent, page } of browsers) {
        const next = await submit(agent, page, '/ui/login/password', { password: person.password });
        expect(next.html).toContain('action="/ui/login/otp"');
        atOtp.push({ agent, page: next });
      }
      const now = Math.floor(f.server.clock.now() / 1000);
      const wrong = String((Number(totpAt(secret, now)) + 500_000) % 1_000_000).padStart(6, '0');
      const answers = await Promise.all(atOtp.map(({ agent, page }) => submit(agent, page, '/ui/login/otp', { code: wrong })));
      expect(answers.every((a) => a.location === undefined)).toBe(true);
      const user = (await f.server.app.ctx.orgs.storedUser(person.userId))!;
      expect(user.state).toBe('USER_STATE_LOCKED');
      expect(user.human!.failedOtpAttempts).toBe(3);
      // Two say the code is wrong, the third that the account is locked; the rest find the
      // sign-in over (the user is no longer active) without a check.
      const texts = answers.map((a) => errorText(a.html) ?? '');
      expect(texts.filter((t) => /code is wrong/.test(t))).toHaveLength(2);
      expect(texts.filter((t) => /locked/.test(t))).toHaveLength(1);
      expect(texts.filter((t) => /expired/.test(t) && !/code/.test(t))).toHaveLength(3);
      // The right code afterwards, in a browser that raced (one still showing the code form): refused.
      const raced = texts.findIndex((t) => /code is wrong/.test(t));
      const right = await submit(atOtp[raced]!.agent, answers[raced]!, '/ui/login/otp', { code: totpAt(secret, now) });
      expect(right.location).toBeUndefined();
      expect(errorText(right.html) ?? '').toMatch(/locked|expired/);
    });
  });
});

describe('with a refresh reuse grace window', () => {
  let f: Fixture;
  beforeAll(async () => {
    // The clock stands still, so every retry lands inside the window whatever the machine's speed.
    f = await fixture({ SESAME_REFRESH_TOKEN_REUSE_GRACE: '10s' });
  });
  afterAll(async () => {
    await f?.server.close();
  });

  it('one refresh token used by 3 requests at once: one rotation, the others get the same successor; the family lives on', async () => {
    const first = await tokens(f);
    const answers = await Promise.all(Array.from({ length: 3 }, () => refresh(f, first.refresh_token!)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const successors = new Set(answers.map((a) => a.body.refresh_token));
    expect(successors.size).toBe(1);
    const [successor] = successors;
    expect(successor).not.toBe(first.refresh_token);
    for (const a of answers) expect(await active(f, a.body.access_token!)).toBe(true);
    const next = await refresh(f, successor!);
    expect(next.status).toBe(200);
    expect(await active(f, next.body.access_token!)).toBe(true);
  });

  it('after the window, the replaced token is reuse and revokes the family', async () => {
    const first = await tokens(f);
    const second = await refresh(f, first.refresh_token!);
    expect(second.status).toBe(200);
    f.server.clock.advance(10_001);
    expect(await refresh(f, first.refresh_token!)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await refresh(f, second.body.refresh_token!)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await active(f, second.body.access_token!)).toBe(false);
  });
});

describe('signing key rotations at once, while tokens are issued', () => {
  const env = { SESAME_SIGNING_ALG: 'EdDSA' };
  let f: Fixture;
  beforeAll(async () => {
    f = await fixture(env);
  });
  afterAll(async () => {
    await f?.server.close();
  });

  const jwks = async (server: InProcessServer) => (await (await fetch(`${server.url}/oauth/v2/keys`)).json()) as JSONWebKeySet;
  const rotate = (server: InProcessServer) => api(server, 'POST', '/admin/v1/keys/_rotate', { token: server.pat });

  it('two rotations and two code redemptions at once: two distinct rotations, every token verifies, a restart publishes the same keys', async () => {
    const before = (await jwks(f.server)).keys.map((k) => k.kid!);
    expect(before).toHaveLength(2);
    const codes = await Promise.all([code(f), code(f)]);
    const [r1, r2, t1, t2] = await Promise.all([rotate(f.server), rotate(f.server), redeem(f, codes[0]!), redeem(f, codes[1]!)]);
    expect([r1.status, r2.status, t1.status, t2.status]).toEqual([200, 200, 200, 200]);
    // One after the other: the first promotes the next key published before, the second the one the first published.
    const kids = [r1.body.kid as string, r2.body.kid as string];
    expect(new Set(kids).size).toBe(2);
    expect(kids).toContain(before[1]);
    const after = (await jwks(f.server)).keys.map((k) => k.kid!);
    const last = kids.find((k) => k !== before[1])!;
    expect(after[0]).toBe(last);
    expect(after).toHaveLength(4);
    expect(after).toEqual(expect.arrayContaining([...before, last]));
    // Tokens signed during the rotations verify against the JWKS published afterwards.
    const keySet = createLocalJWKSet(await jwks(f.server));
    for (const t of [t1, t2]) {
      expect(after).toContain(decodeProtectedHeader(t.body.id_token!).kid);
      await jwtVerify(t.body.id_token!, keySet, { issuer: f.server.issuer });
    }
    const fresh = await tokens(f);
    expect(decodeProtectedHeader(fresh.id_token!).kid).toBe(last);

    // What was published is what was stored.
    const published = await jwks(f.server);
    await f.server.stop();
    const restarted = await startInProcess({ dataDir: f.server.dataDir, clock: f.server.clock, env });
    try {
      // Active and next first, in that order; the retired ones in any order.
      const order = (set: JSONWebKeySet) => [...set.keys.slice(0, 2), ...set.keys.slice(2).sort((a, b) => a.kid!.localeCompare(b.kid!))];
      expect(order(await jwks(restarted))).toEqual(order(published));
    } finally {
      await restarted.close();
      rmSync(f.server.dataDir, { recursive: true, force: true });
    }
  });
});
