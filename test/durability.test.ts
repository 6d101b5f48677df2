import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createApiApp, createMachineClient } from './helpers/api.js';
import { startInProcess } from './helpers/in-process.js';
import { startServer, tempDataDir, type ServerAddress } from './helpers/server.js';

/**
 * A token handed out, or a revocation confirmed, survives a SIGKILL right after the response.
 * Restarts reuse the data dir and never redo the first-start bootstrap. A server whose process
 * ending is the point (SIGKILL, SIGTERM, an exit code) is a process; the one that starts after
 * it on the same data dir runs in this process.
 */
const form = (body: Record<string, string>) => new URLSearchParams(body).toString();
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

async function ccToken(server: ServerAddress, client: { clientId: string; clientSecret: string }, scope: string): Promise<string> {
  const res = await fetch(`${server.url}/oauth/v2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.clientId, client.clientSecret) },
    body: form({ grant_type: 'client_credentials', scope }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

async function introspect(server: ServerAddress, app: { clientId: string; clientSecret: string }, token: string): Promise<boolean> {
  const res = await fetch(`${server.url}/oauth/v2/introspect`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(app.clientId, app.clientSecret) },
    body: form({ token }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { active: boolean }).active;
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('durability', () => {
  it('keeps every handed-out token and confirmed revocation across SIGKILL', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    // A fixed issuer: the JWTs handed out must stay valid for the restarted server on another port.
    const env = { SESAME_ISSUER: 'http://sesame.durability.test' };
    const server = await startServer({ dataDir, env });
    const opaque = await createMachineClient(server, 'durable-opaque');
    const jwt = await createMachineClient(server, 'durable-jwt', 'ACCESS_TOKEN_TYPE_JWT');
    const app = await createApiApp(server, 'durable');
    const scope = `urn:zitadel:iam:org:project:id:${app.projectId}:aud`;
    const patBefore = server.pat;

    const opaqueTokens = await Promise.all(Array.from({ length: 150 }, () => ccToken(server, opaque, scope)));
    const jwtTokens = await Promise.all(Array.from({ length: 20 }, () => ccToken(server, jwt, scope)));
    const revoked = [...opaqueTokens.slice(0, 30), ...jwtTokens.slice(0, 5)];
    await Promise.all(
      revoked.map(async (token) => {
        const owner = jwtTokens.includes(token) ? jwt : opaque;
        const res = await fetch(`${server.url}/oauth/v2/revoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(owner.clientId, owner.clientSecret) },
          body: form({ token }),
        });
        expect(res.status).toBe(200);
      }),
    );
    // Kill at once: no graceful flush.
    expect(await server.stop('SIGKILL')).toBeNull();

    const restarted = await startInProcess({ dataDir, env });
    try {
      expect(restarted.pat).toBe(patBefore);
      expect(readFileSync(join(dataDir, 'admin.pat'), 'utf8').trim()).toBe(patBefore);
      for (const token of [...opaqueTokens, ...jwtTokens]) {
        expect(await introspect(restarted, app, token)).toBe(!revoked.includes(token));
      }
      // The bootstrap admin still works and no second instance was created.
      expect(restarted.logs()).not.toContain('first start');
    } finally {
      await restarted.stop();
    }
  });

  it('shuts down gracefully on SIGTERM: in-flight requests finish, exit code 0', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const server = await startServer({ dataDir });
    const opaque = await createMachineClient(server, 'graceful');
    let firstAnswer!: () => void;
    const answered = new Promise<void>((resolve) => (firstAnswer = resolve));
    const inflight = Array.from({ length: 40 }, () =>
      fetch(`${server.url}/oauth/v2/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(opaque.clientId, opaque.clientSecret) },
        body: 'grant_type=client_credentials',
      }).then(
        (r) => {
          firstAnswer();
          return r.status;
        },
        () => 'refused',
      ),
    );
    // Stop once the server is working through the batch (not after a guessed delay, which on a
    // busy machine could come before any request arrived).
    await Promise.race([answered, Promise.all(inflight)]);
    const code = await server.stop('SIGTERM');
    const statuses = await Promise.all(inflight);
    expect(code).toBe(0);
    // Every request the server accepted was answered properly; later ones were refused or told to retry.
    for (const status of statuses) expect([200, 503, 'refused']).toContain(status);
    expect(statuses).toContain(200);
    expect(server.logs()).toContain('"stopped"');
  });

  it('refuses to start on a bad setting with exit code 2 naming it', async () => {
    await expect(startServer({ env: { SESAME_SIGNING_ALG: 'HS256' } })).rejects.toThrow(/exited with 2[\s\S]*SESAME_SIGNING_ALG/);
    await expect(startServer({ args: ['--access-token-lifetime', 'soon'] })).rejects.toThrow(/exited with 2[\s\S]*SESAME_ACCESS_TOKEN_LIFETIME/);
  });

  it('refuses to start with a master key that does not match the data dir', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const server = await startInProcess({ dataDir, env: { SESAME_MASTERKEY: 'a'.repeat(32) } });
    await server.stop();
    await expect(startServer({ dataDir, env: { SESAME_MASTERKEY: 'b'.repeat(32) } })).rejects.toThrow(/master key does not match/);
  });
});
