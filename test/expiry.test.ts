import { open } from 'lmdb';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeProtectedHeader } from 'jose';
import { createApiApp, createMachineClient } from './helpers/api.js';
import { startServer, type TestServer } from './helpers/server.js';

/**
 * Time-driven behaviour with short settings: tokens expire (introspection says inactive), the
 * sweeper removes expired tokens from LMDB, and signing keys rotate on their interval.
 */
let server: TestServer;
let opaque: { clientId: string; clientSecret: string };
let jwt: { clientId: string; clientSecret: string };
let app: { projectId: string; clientId: string; clientSecret: string };

const basic = (id: string, secret: string) =>
  'Basic ' + Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function token(client: { clientId: string; clientSecret: string }): Promise<string> {
  const res = await fetch(`${server.url}/oauth/v2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.clientId, client.clientSecret) },
    body: `grant_type=client_credentials&scope=${encodeURIComponent(`urn:zitadel:iam:org:project:id:${app.projectId}:aud`)}`,
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { access_token: string; expires_in: number };
  expect(body.expires_in).toBe(2);
  return body.access_token;
}

async function active(t: string): Promise<boolean> {
  const res = await fetch(`${server.url}/oauth/v2/introspect`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(app.clientId, app.clientSecret) },
    body: `token=${encodeURIComponent(t)}`,
  });
  return ((await res.json()) as { active: boolean }).active;
}

beforeAll(async () => {
  server = await startServer({
    env: { SESAME_ACCESS_TOKEN_LIFETIME: '2s', SESAME_ID_TOKEN_LIFETIME: '2s', SESAME_SWEEP_INTERVAL: '500ms', SESAME_KEY_ROTATION_INTERVAL: '3s', SESAME_SIGNING_ALG: 'EdDSA' },
  });
  opaque = await createMachineClient(server, 'expiring-opaque');
  jwt = await createMachineClient(server, 'expiring-jwt', 'ACCESS_TOKEN_TYPE_JWT');
  app = await createApiApp(server, 'expiry');
});
afterAll(async () => {
  await server?.close();
  if (server) rmSync(server.dataDir, { recursive: true, force: true });
});

describe('expiry', () => {
  it('reports expired tokens inactive and sweeps them from storage', async () => {
    const tokens = [await token(opaque), await token(jwt)];
    for (const t of tokens) expect(await active(t)).toBe(true);
    await sleep(3200);
    for (const t of tokens) expect(await active(t)).toBe(false);
    await server.stop();
    const db = open({ path: join(server.dataDir, 'sesame.lmdb'), maxDbs: 32, readOnly: true });
    const stored = db.openDB({ name: 'tokens', keyEncoding: 'binary' });
    expect([...stored.getKeys()].length).toBe(0);
    await db.close();
  }, 20_000);
});

describe('automatic key rotation', () => {
  it('rotates on the interval and keeps the retired key published while its tokens live', async () => {
    const restarted = await startServer({
      dataDir: server.dataDir,
      env: { SESAME_ACCESS_TOKEN_LIFETIME: '2s', SESAME_KEY_ROTATION_INTERVAL: '3s', SESAME_SIGNING_ALG: 'EdDSA' },
    });
    server = restarted;
    const kids = async () => ((await (await fetch(`${server.url}/oauth/v2/keys`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
    const first = await token(jwt);
    const firstKid = decodeProtectedHeader(first).kid!;
    const published = await kids();
    expect(published[0]).toBe(firstKid);
    await sleep(3500);
    const second = await token(jwt);
    const secondKid = decodeProtectedHeader(second).kid!;
    expect(secondKid).not.toBe(firstKid);
    // The key that signs now was published before the rotation.
    expect(published).toContain(secondKid);
    expect(await kids()).toContain(firstKid);
  }, 20_000);
});
