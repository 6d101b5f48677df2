import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, createApiApp, createMachineClient } from './helpers/api.js';
import { Agent, createHuman, createWebApp, submit, uniqueName, type Step, type WebApp } from './helpers/oidc.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';

/**
 * Password work cannot starve token signing, and costly hashes cannot starve other people's
 * sign-ins. Imported hashes may cost up to the verification limit (~1.5 s here); sign-in attempts
 * against such users are queued on the password threads' costly lane, and a client_credentials JWT
 * and an ordinary person's sign-in must still be answered meanwhile.
 *
 * The assertion is about ordering, not speed: several JWTs are issued one after the other while
 * *none* of the sign-in attempts has been answered yet. Each attempt needs ~0.4 s of one thread's
 * CPU (200000 rounds of SHA-512-crypt) before it can be answered, a JWT a few milliseconds, so the
 * check holds on a slow or busy machine too (both slow down alike). When password work shares the
 * signing threads, the attempts occupy every thread and the JWTs queue behind them: the first
 * attempts are answered before the second JWT, and the test fails.
 */
let server: InProcessServer;
let web: WebApp;
let machine: { clientId: string; clientSecret: string };
let audience: string;

const REDIRECT = 'http://localhost:9999/callback';
/** Accepted at import (within the limit), but costly: ~0.4 s per verification. */
const COSTLY_HASH = `$6$rounds=200000$costlysalt$${'a'.repeat(86)}`;
/**
 * Signing threads, and as many password threads. One costly attempt per thread is enough: were
 * password work and signing (or costly and ordinary hashes) to share threads, these attempts alone
 * would occupy all of them.
 */
const WORKERS = 2;
const HOSTILE_USERS = WORKERS;

beforeAll(async () => {
  server = await startInProcess({ env: { SESAME_WORKERS: String(WORKERS) } });
  web = await createWebApp(server);
  machine = await createMachineClient(server, 'svc-during-attack', 'ACCESS_TOKEN_TYPE_JWT');
  audience = `urn:zitadel:iam:org:project:id:${(await createApiApp(server, 'resource')).projectId}:aud`;
});

afterAll(async () => {
  await server?.close();
});

async function importCostlyUser(): Promise<string> {
  const userName = uniqueName('costly');
  const res = await api(server, 'POST', '/management/v1/users/human/_import', {
    token: server.pat,
    body: {
      userName,
      profile: { firstName: 'Costly', lastName: 'Hash', preferredLanguage: 'en' },
      email: { email: `${userName}@example.com`, isEmailVerified: true },
      hashedPassword: { value: COSTLY_HASH },
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const user = await api(server, 'GET', `/management/v1/users/${res.body.userId}`, { token: server.pat });
  return user.body.user.preferredLoginName as string;
}

async function clientCredentialsJwt(): Promise<string> {
  const res = await fetch(`${server.url}/oauth/v2/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(machine.clientId)}:${encodeURIComponent(machine.clientSecret)}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: audience }).toString(),
  });
  expect(res.status).toBe(200);
  const { access_token } = (await res.json()) as { access_token: string };
  expect(access_token.split('.')).toHaveLength(3);
  return access_token;
}

describe('password work and signing', () => {
  it('signs client_credentials JWTs while costly sign-in attempts are still queued', async () => {
    // Each attacker sits on the password page of a costly user.
    const pages: { agent: Agent; page: Step }[] = [];
    for (let i = 0; i < HOSTILE_USERS; i++) {
      const loginName = await importCostlyUser();
      const agent = new Agent(server);
      const authorize = `/oauth/v2/authorize?${new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 's' })}`;
      const page = await submit(agent, await agent.follow(authorize), '/ui/login/loginname', { loginName });
      expect(page.html).toContain('action="/ui/login/password"');
      pages.push({ agent, page });
    }
    await clientCredentialsJwt(); // warm: the signing key and client are loaded

    let answered = 0;
    const attempts = pages.map(({ agent, page }) => submit(agent, page, '/ui/login/password', { password: 'not-the-password' }).finally(() => answered++));
    // JWTs one after the other, each asked for while every attempt is still pending.
    for (let i = 0; i < 3; i++) {
      await clientCredentialsJwt();
      expect(answered, `sign-in attempts answered before JWT #${i + 1}`).toBe(0);
    }

    // The attempts were real verifications, answered in the end with the wrong-password page.
    for (const result of await Promise.all(attempts)) {
      expect(result.status).toBe(200);
      expect(result.html).toMatch(/role="alert">[^<]*wrong/);
    }
  });

  it("answers another person's sign-in while costly sign-in attempts are still queued", async () => {
    const authorize = `/oauth/v2/authorize?${new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 's' })}`;
    const passwordPage = async (loginName: string) => {
      const agent = new Agent(server);
      const page = await submit(agent, await agent.follow(authorize), '/ui/login/loginname', { loginName });
      expect(page.html).toContain('action="/ui/login/password"');
      return { agent, page };
    };
    // One hostile attempt per password thread.
    const hostile: { agent: Agent; page: Step }[] = [];
    for (let i = 0; i < HOSTILE_USERS; i++) hostile.push(await passwordPage(await importCostlyUser()));
    const person = await createHuman(server);
    const own = await passwordPage(person.loginName);

    let answered = 0;
    const attempts = hostile.map(({ agent, page }) => submit(agent, page, '/ui/login/password', { password: 'not-the-password' }).finally(() => answered++));
    // Ordinary hashes do not queue behind costly ones: a password thread is kept free for them.
    const signedIn = await submit(own.agent, own.page, '/ui/login/password', { password: person.password });
    expect(signedIn.location).toMatch(/code=/);
    expect(answered, 'costly attempts answered before the ordinary sign-in').toBe(0);
    await Promise.all(attempts);
  });
});
