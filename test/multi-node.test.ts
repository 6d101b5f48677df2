import pg from 'pg';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { docBlocks } from './helpers/doc-blocks.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPairSync, randomBytes, randomUUID, sign } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, basicAuth, createApiApp, createMachineClient, postForm } from './helpers/api.js';
import { Agent, codeFlowTokens, createHuman, createWebApp, DEVICE_APP, enterDeviceCode, exchangeCode, signIn, submit } from './helpers/oidc.js';
import { postgresCluster, type PostgresCluster } from './helpers/postgres.js';
import { freePort, startServer, type TestServer } from './helpers/server.js';

/**
 * Two Sesame processes on one PostgreSQL database (SESAME_DATABASE_URL), as a team runs them
 * behind a load balancer: each decision is the database's, so what one node hands out the other
 * honours, what both are asked at once succeeds once, and what one node changes the other refuses
 * at once (read at use) or within the notification's way (its copies of the directory).
 */
const MASTER_KEY = randomBytes(32).toString('base64url');
const temps: string[] = [];
const nodes: TestServer[] = [];
let cluster: PostgresCluster;

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sesame-node-'));
  temps.push(dir);
  return dir;
}

/** A node on `url` answering as `issuer` (the load balancer's address: the same on every node). */
async function startNode(url: string, issuer: string, options: { pat?: string; port?: number; env?: Record<string, string> } = {}): Promise<TestServer> {
  const node = await startServer({
    dataDir: dataDir(),
    ...(options.pat ? { pat: options.pat } : {}),
    env: {
      SESAME_DATABASE_URL: url,
      SESAME_MASTERKEY: MASTER_KEY,
      SESAME_ISSUER: issuer,
      SESAME_PORT: String(options.port ?? 0),
      ...options.env,
    },
  });
  nodes.push(node);
  return node;
}

/** Two nodes on a new database, started together: the first to take the start turn bootstraps. */
async function twoNodes(prefix: string): Promise<{ a: TestServer; b: TestServer; url: string }> {
  const url = await cluster.database(prefix);
  const issuer = `http://localhost:${await freePort()}`;
  const [dirA, dirB] = [dataDir(), dataDir()];
  const env = { SESAME_DATABASE_URL: url, SESAME_MASTERKEY: MASTER_KEY, SESAME_ISSUER: issuer };
  // Neither knows the PAT before the start: whichever bootstraps writes it into its data dir.
  const started = await Promise.all([dirA, dirB].map((dir) => startServer({ dataDir: dir, pat: 'unknown-yet', env })));
  nodes.push(...started);
  const written = [dirA, dirB].filter((dir) => existsSync(join(dir, 'admin.pat')));
  expect(written).toHaveLength(1);
  const pat = readFileSync(join(written[0]!, 'admin.pat'), 'utf8').trim();
  const [a, b] = started.map((node) => ({ ...node, pat })) as [TestServer, TestServer];
  return { a, b, url };
}

/** `scope`: with an introspector's audience (introspection answers active only for a token in its caller's audience). */
const clientCredentials = (node: TestServer, id: string, secret: string, scope = 'openid') => postForm(node, '/oauth/v2/token', { grant_type: 'client_credentials', scope }, basicAuth(id, secret));

/** Polls `refused` on a node until it is true; the milliseconds from the call until then. */
async function msUntil(refused: () => Promise<boolean>, limitMs = 5_000): Promise<number> {
  const startedAt = performance.now();
  while (!(await refused())) {
    if (performance.now() - startedAt > limitMs) throw new Error(`still not refused after ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return performance.now() - startedAt;
}

/**
 * An API app made on `made` that introspects on `on`: its Basic credentials once `on` holds it (a
 * directory change reaches the other node with its notification, a few milliseconds later).
 */
async function introspectorOn(made: TestServer, on: TestServer): Promise<{ auth: string; audience: string }> {
  const app = await createApiApp(made, `introspector-${Date.now()}`);
  const auth = basicAuth(app.clientId, app.clientSecret);
  await msUntil(async () => (await postForm(on, '/oauth/v2/introspect', { token: 'none' }, auth)).status === 200);
  return { auth, audience: `openid urn:zitadel:iam:org:project:id:${app.projectId}:aud` };
}

/** A machine user with a secret made on `made`, once `on` (another node) takes its client credentials. */
async function machineOn(made: TestServer, on: TestServer, name: string, type?: 'ACCESS_TOKEN_TYPE_BEARER' | 'ACCESS_TOKEN_TYPE_JWT') {
  const machine = await createMachineClient(made, `${name}-${Date.now()}`, type);
  await msUntil(async () => (await clientCredentials(on, machine.clientId, machine.clientSecret)).status === 200);
  return machine;
}

/** Waits until `node` (another node than the one that made it) finds what the management API path names. */
async function seenOn(node: TestServer, path: string): Promise<void> {
  await msUntil(async () => (await api(node, 'GET', path, { token: node.pat })).status === 200);
}

const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;

beforeAll(async () => {
  cluster = await postgresCluster();
});

afterAll(async () => {
  // A node that ended by itself (not the one a test killed) shows why.
  for (const node of nodes) {
    if (node.process.exitCode !== null && node.process.signalCode === null) console.error(`a node exited with ${node.process.exitCode}:\n${node.logs().slice(-4000)}`);
  }
  await Promise.all(nodes.map((node) => node.stop('SIGKILL')));
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

describe('two nodes on one PostgreSQL database', () => {
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    ({ a, b } = await twoNodes('two_nodes'));
  });

  it('started together, they bootstrapped once: one instance, one key set, both ready', async () => {
    for (const node of [a, b]) expect((await fetch(`${node.url}/readyz`)).status).toBe(200);
    const [keysA, keysB] = await Promise.all([a, b].map(async (node) => (await (await fetch(`${node.url}/oauth/v2/keys`)).json()) as { keys: { kid: string }[] }));
    expect(keysA!.keys.map((k) => k.kid).sort()).toEqual(keysB!.keys.map((k) => k.kid).sort());
    const orgsA = await api(a, 'GET', '/management/v1/orgs/me', { token: a.pat });
    const orgsB = await api(b, 'GET', '/management/v1/orgs/me', { token: b.pat });
    expect(orgsA.status).toBe(200);
    expect(orgsB.body.org.id).toBe(orgsA.body.org.id);
    // One LISTEN connection per node, however many HTTP threads it has (its other threads read what it heard).
    const url = new URL(databaseUrlOf(a));
    const admin = new pg.Client({ connectionString: url.href });
    await admin.connect();
    try {
      const { rows } = await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN%'`, [url.pathname.slice(1)]);
      expect(rows[0].n).toBe(2);
    } finally {
      await admin.end();
    }
  });

  it('a code from A is redeemed on B; the same code on A and B at once succeeds once', async () => {
    const app = await createWebApp(a);
    const person = await createHuman(a);
    // Made on A; B redeems the code (and authenticates the app) once it holds them.
    await seenOn(b, `/management/v1/projects/${app.projectId}/apps/${app.appId}`);
    const params = new URLSearchParams({ client_id: app.clientId, redirect_uri: 'http://localhost:9999/callback', response_type: 'code', scope: 'openid offline_access' });
    const signedIn = await signIn(new Agent(a), `/oauth/v2/authorize?${params}`, person);
    expect(signedIn.location).toContain('code=');
    const onB = await exchangeCode(b, app, signedIn.location!);
    expect(onB.status).toBe(200);
    expect(onB.claims.sub).toBe(person.userId);

    for (let round = 0; round < 3; round++) {
      const again = await signIn(new Agent(b), `/oauth/v2/authorize?${params}`, person);
      const results = await Promise.all([exchangeCode(a, app, again.location!), exchangeCode(b, app, again.location!)]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    }
  });

  it('a refresh token used on A and B at once is rotated once (the loser is refused)', async () => {
    const app = await createWebApp(b);
    const person = await createHuman(b);
    // Made on B, signed in on A: A holds them a moment later.
    await seenOn(a, `/management/v1/projects/${app.projectId}/apps/${app.appId}`);
    await seenOn(a, `/management/v1/users/${person.userId}`);
    for (let round = 0; round < 3; round++) {
      const { refresh_token } = await codeFlowTokens(a, app, person, 'openid offline_access');
      const refresh = (node: TestServer) => postForm(node, '/oauth/v2/token', { grant_type: 'refresh_token', refresh_token: refresh_token! }, basicAuth(app.clientId, app.clientSecret));
      const results = await Promise.all([refresh(a), refresh(b)]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    }
  });

  it('an approved device code polled on A and B at once is redeemed once', { timeout: 30_000 }, async () => {
    const app = await createWebApp(a, { ...DEVICE_APP, name: `device-${Date.now()}` });
    const person = await createHuman(a);
    await seenOn(b, `/management/v1/projects/${app.projectId}/apps/${app.appId}`);
    await seenOn(b, `/management/v1/users/${person.userId}`);
    // Two rounds, started together: each waits out the polling interval once (these processes run on the system clock).
    const rounds = await Promise.all([0, 1].map(() => postForm(a, '/oauth/v2/device_authorization', { client_id: app.clientId, scope: 'openid' })));
    const pollableAt = Date.now() + (rounds[0]!.body.interval as number) * 1000 + 100;
    for (const started of rounds) {
      expect(started.status).toBe(200);
      // Approved in a browser on B.
      const agent = new Agent(b);
      const consent = await enterDeviceCode(agent, started.body.verification_uri_complete as string, person);
      const approved = await submit(agent, consent, '/ui/login/device/consent', { decision: 'allow' });
      expect(approved.status, approved.html?.slice(0, 500)).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, pollableAt - Date.now())));
      const poll = (node: TestServer) =>
        postForm(node, '/oauth/v2/token', { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: started.body.device_code as string, client_id: app.clientId });
      const results = await Promise.all([poll(a), poll(b)]);
      expect(results.map((r) => r.status).sort(), JSON.stringify(results.map((r) => r.body))).toEqual([200, 400]);
    }
  });

  it('a JWT profile assertion sent to A and B at once is used once (its jti is decided in the database)', async () => {
    const machine = await machineOn(a, b, 'keyed');
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const key = await api(a, 'POST', `/management/v1/users/${machine.userId}/keys`, {
      token: a.pat,
      body: { type: 'KEY_TYPE_JSON', publicKey: Buffer.from(pair.publicKey.export({ format: 'pem', type: 'spki' }).toString()).toString('base64') },
    });
    expect(key.status).toBe(200);
    const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const assertion = () => {
      const now = Math.floor(Date.now() / 1000);
      const input = `${b64url({ alg: 'ES256', kid: key.body.keyId })}.${b64url({ iss: machine.userId, sub: machine.userId, aud: a.issuer, iat: now, exp: now + 300, jti: randomUUID() })}`;
      return `${input}.${sign('sha256', Buffer.from(input), { key: pair.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
    };
    const grant = (node: TestServer, jwt: string) => postForm(node, '/oauth/v2/token', { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', scope: 'openid', assertion: jwt });
    // B takes the key a moment after A made it.
    await msUntil(async () => (await grant(b, assertion())).status === 200);
    for (let round = 0; round < 5; round++) {
      const jwt = assertion();
      const results = await Promise.all([grant(a, jwt), grant(b, jwt)]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    }
  });

  it('a token revoked on A is inactive on B at once; a lock or a new secret on A refuses on B within 100 ms', async () => {
    const introspector = await introspectorOn(a, b);
    // Opaque and JWT access tokens: a revocation is a decision in the store, read at use.
    for (const type of ['ACCESS_TOKEN_TYPE_BEARER', 'ACCESS_TOKEN_TYPE_JWT'] as const) {
      const machine = await machineOn(a, b, `revoked-${type.slice(18).toLowerCase()}`, type);
      const issued = await clientCredentials(b, machine.clientId, machine.clientSecret, introspector.audience);
      expect(issued.status).toBe(200);
      const token = issued.body.access_token as string;
      const introspect = (node: TestServer) => postForm(node, '/oauth/v2/introspect', { token }, introspector.auth);
      expect((await introspect(a)).body.active).toBe(true);
      expect((await introspect(b)).body.active).toBe(true);
      expect((await postForm(a, '/oauth/v2/revoke', { token }, basicAuth(machine.clientId, machine.clientSecret))).status).toBe(200);
      expect((await introspect(b)).body.active).toBe(false);
    }

    // The directory (a user's state, a client's secret) reaches B's copies with the notification.
    const lockMs: number[] = [];
    const secretMs: number[] = [];
    for (let round = 0; round < 5; round++) {
      const locked = await machineOn(a, b, `locked-${round}`);
      expect((await api(a, 'POST', `/management/v1/users/${locked.userId}/_lock`, { token: a.pat, body: {} })).status).toBe(200);
      lockMs.push(await msUntil(async () => (await clientCredentials(b, locked.clientId, locked.clientSecret)).status !== 200));

      const renewed = await machineOn(a, b, `renewed-${round}`);
      expect((await api(a, 'PUT', `/management/v1/users/${renewed.userId}/secret`, { token: a.pat, body: {} })).status).toBe(200);
      secretMs.push(await msUntil(async () => (await clientCredentials(b, renewed.clientId, renewed.clientSecret)).status === 401));
    }
    // The median of five: one garbage collection on a busy test machine does not decide it.
    console.info(`a lock on A refused on B after ${lockMs.map((ms) => ms.toFixed(1)).join(', ')} ms; a new secret after ${secretMs.map((ms) => ms.toFixed(1)).join(', ')} ms`);
    expect(median(lockMs)).toBeLessThan(100);
    expect(median(secretMs)).toBeLessThan(100);
  });

  it("a node's threads read the node's own writes: what one request changed, the next one finds, whichever thread serves it", async () => {
    for (let round = 0; round < 20; round++) {
      // A project made, then an app in it at once (each request on a new connection: any thread of the node may take it).
      const project = await fetch(`${a.url}/management/v1/projects`, {
        method: 'POST',
        headers: { authorization: `Bearer ${a.pat}`, 'content-type': 'application/json', connection: 'close' },
        body: JSON.stringify({ name: `own-writes-${round}-${Date.now()}` }),
      });
      expect(project.status).toBe(200);
      const { id } = (await project.json()) as { id: string };
      const app = await fetch(`${a.url}/management/v1/projects/${id}/apps/api`, {
        method: 'POST',
        headers: { authorization: `Bearer ${a.pat}`, 'content-type': 'application/json', connection: 'close' },
        body: JSON.stringify({ name: 'API', authMethodType: 'API_AUTH_METHOD_TYPE_BASIC' }),
      });
      expect(app.status, await app.text()).toBe(200);
    }
  });

  it('a node answers as one: what another node changed, once one request on it saw it, every later request sees, whichever thread serves it', async () => {
    for (let round = 0; round < 10; round++) {
      const project = await api(a, 'POST', '/management/v1/projects', { token: a.pat, body: { name: `seen-once-${round}-${Date.now()}` } });
      expect(project.status).toBe(200);
      // Each on a new connection: any of B's threads may take it, notified yet or not.
      const onB = () => fetch(`${b.url}/management/v1/projects/${project.body.id}`, { headers: { authorization: `Bearer ${b.pat}`, connection: 'close' } }).then((r) => r.status);
      await msUntil(async () => (await onB()) === 200);
      const after = await Promise.all(Array.from({ length: 8 }, onB));
      expect(after).toEqual(Array(8).fill(200));
    }
  });

  it("a node's metrics show its statements, its pool and how late the other nodes' notifications arrive", async () => {
    const c = await startNode(databaseUrlOf(a), a.issuer, { pat: a.pat, env: { SESAME_METRICS_PORT: '0' } });
    const metricsUrl = /"metrics":"([^"]+)"/.exec(c.logs())![1]!;
    // A change on A reaches C by a notification.
    const project = await api(a, 'POST', '/management/v1/projects', { token: a.pat, body: { name: `seen-on-c-${Date.now()}` } });
    await msUntil(async () => (await api(c, 'GET', `/management/v1/projects/${project.body.id}`, { token: c.pat })).status === 200);
    const text = await (await fetch(metricsUrl)).text();
    const count = (name: string) => Number(new RegExp(`^${name}_count (\\S+)$`, 'm').exec(text)?.[1]);
    expect(count('sesame_postgres_statement_duration_seconds')).toBeGreaterThan(0);
    expect(count('sesame_postgres_connection_wait_seconds')).toBeGreaterThan(0);
    expect(count('sesame_postgres_notification_lag_seconds')).toBeGreaterThan(0);
    expect(Number(/^sesame_postgres_pool_connections\{state="total"\} (\S+)$/m.exec(text)?.[1])).toBeGreaterThan(0);
    await c.stop();
  });

  it('a node whose master key does not open the database refuses to start (exit 2), naming the setting', async () => {
    const wrong = await startNode(databaseUrlOf(a), a.issuer, { pat: a.pat, env: { SESAME_MASTERKEY: randomBytes(32).toString('base64url') } }).then(
      () => 'started',
      (error: Error) => error.message,
    );
    expect(wrong).toMatch(/exited with 2/);
    expect(wrong).toMatch(/SESAME_MASTERKEY \(--master-key\).*every node on one database needs the same master key/s);
  });

  it('the offline commands work on the database while the nodes run: a new admin token from `sesame admin-pat --new` is taken by both', async () => {
    const dir = dataDir();
    const cli = join(import.meta.dirname, '..', 'dist', 'cli.js');
    const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SESAME_'))), SESAME_WORKERS: '1' };
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [cli, 'admin-pat', '--new', '--print', '--data-dir', dir, '--database-url', databaseUrlOf(a), '--master-key', MASTER_KEY], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(code, stderr).toBe(0);
    const token = stdout.trim();
    expect(readFileSync(join(dir, 'admin.pat'), 'utf8').trim()).toBe(token);
    // The command's commit reaches both nodes' copies with its notification.
    for (const node of [a, b]) await msUntil(async () => (await api(node, 'GET', '/management/v1/orgs/me', { token })).status === 200, 2_000);
  });

  it('a node the server refuses for too many connections says why and what it asks for', async () => {
    const url = new URL(await cluster.database('limited'));
    const role = `limited_${process.pid}`;
    const admin = new pg.Client({ connectionString: url.href });
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT 2`);
      await admin.query(`ALTER DATABASE ${url.pathname.slice(1)} OWNER TO ${role}`);
    } finally {
      await admin.end();
    }
    url.username = role;
    const refused = await startNode(url.href, a.issuer, { env: { SESAME_HTTP_THREADS: '2', SESAME_DATABASE_POOL_SIZE: '4' } }).then(
      () => 'started',
      (error: Error) => error.message,
    );
    // The server's words, and this node's count: 2 threads × (2 of the pool + 2 pipelined) + 1 listening + 1 starting.
    expect(refused).toMatch(/exited with [12]/);
    expect(refused).toMatch(/too many connections for role.*this node opens up to 10 connections/s);
  });
});

describe('two nodes through failures', () => {
  it('kill -9 of A under load: every token A answered stays valid on B, and B keeps serving', async () => {
    const { a, b } = await twoNodes('kill_nine');
    const machine = await createMachineClient(a, `loaded-${Date.now()}`);
    const introspector = await introspectorOn(a, b);
    const answered: string[] = [];
    let stopLoad = false;
    const load = async () => {
      while (!stopLoad) {
        const res = await clientCredentials(a, machine.clientId, machine.clientSecret, introspector.audience).catch(() => undefined);
        if (!res) return;
        if (res.status === 200) answered.push(res.body.access_token as string);
      }
    };
    const workers = Array.from({ length: 8 }, load);
    while (answered.length < 50) await new Promise((resolve) => setTimeout(resolve, 5));
    a.process.kill('SIGKILL');
    await Promise.all(workers);
    stopLoad = true;
    expect(answered.length).toBeGreaterThanOrEqual(50);
    // Every answer A sent was committed first: B finds each token active.
    const checks = await Promise.all(answered.map((token) => postForm(b, '/oauth/v2/introspect', { token }, introspector.auth)));
    expect(checks.filter((check) => check.body.active !== true)).toEqual([]);
    expect((await clientCredentials(b, machine.clientId, machine.clientSecret)).status).toBe(200);
    expect((await fetch(`${b.url}/readyz`)).status).toBe(200);
  });

  it('a database restart under load: requests meanwhile get 503 (never 500), readiness follows, and both nodes recover by themselves', async () => {
    const { a, b } = await twoNodes('db_restart');
    // Load goes to both nodes from the start: B must hold the client first (it reaches B with the notification).
    const machine = await machineOn(a, b, 'restart');
    const statuses = new Map<number, number>();
    let stopLoad = false;
    const load = async (node: TestServer) => {
      while (!stopLoad) {
        const res = await clientCredentials(node, machine.clientId, machine.clientSecret).catch(() => ({ status: -1, body: {} }));
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const workers = [a, a, b, b].map(load);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await cluster.stop();
    // Readiness says so while the database is away.
    for (const node of [a, b]) await msUntil(async () => (await fetch(`${node.url}/readyz`)).status === 503);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await cluster.start();
    for (const node of [a, b]) await msUntil(async () => (await fetch(`${node.url}/readyz`)).status === 200, 20_000);
    for (const node of [a, b]) await msUntil(async () => (await clientCredentials(node, machine.clientId, machine.clientSecret)).status === 200, 20_000);
    stopLoad = true;
    await Promise.all(workers);
    expect(statuses.get(503)).toBeGreaterThan(0);
    expect([...statuses.keys()].filter((status) => status !== 200 && status !== 503)).toEqual([]);
  });
});

/** The database URL a node was started with. */
function databaseUrlOf(node: TestServer): string {
  const match = /"database":"([^"]+)"/.exec(node.logs());
  if (!match) throw new Error('the node did not log its database');
  return match[1]!;
}

describe("the multi-node guide's two-node example", () => {
  it('runs as written against a new database: a token from B is active on A, revoked on B, inactive on A', { timeout: 60_000 }, async () => {
    const root = fileURLToPath(new URL('..', import.meta.url));
    const block = docBlocks(readFileSync(join(root, 'docs', 'multi-node.md'), 'utf8')).find((b) => b.lang === 'sh');
    expect(block?.skip).toMatch(/multi-node\.test\.ts/);
    // A directory of its own, as a user's checkout: `dist` is the project's, the node data dirs and logs land here.
    const cwd = dataDir();
    symlinkSync(join(root, 'dist'), join(cwd, 'dist'));
    const [portA, portB] = [await freePort(), await freePort()];
    const env = {
      ...process.env,
      SESAME_DATABASE_URL: await cluster.database('readme'),
      NODE_A_PORT: String(portA),
      NODE_B_PORT: String(portB),
      SESAME_ISSUER: `http://localhost:${portA}`,
      SESAME_LOG_LEVEL: 'warn',
    };
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn('bash', ['-c', block!.text], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, output });
      });
    });
    const logs = ['node-a.log', 'node-b.log'].map((log) => (existsSync(join(cwd, log)) ? readFileSync(join(cwd, log), 'utf8').slice(-2000) : '')).join('\n');
    expect(code, `${output}\n${logs}`).toBe(0);
    expect(output.match(/\{"active":(true|false)\}/g)).toEqual(['{"active":true}', '{"active":false}']);
  });
});
