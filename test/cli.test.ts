import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, type ApiResult } from './helpers/api.js';
import { Agent, signIn, type WebApp } from './helpers/oidc.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';
import { tempDataDir } from './helpers/server.js';
import { MIGRATIONS } from '../src/storage/postgres/migrations.js';
import { postgresCluster, testStoreEnv } from './helpers/postgres.js';
import pg from 'pg';

/**
 * The `sesame` command (dist/cli.js) as an operator runs it: real processes, temp data dirs, port 0.
 * Export from a running server, import offline into a second data dir, start a server on it and
 * sign in there; a data dir a server holds is refused offline; `admin-pat --new` and `keys rotate`.
 */
const CLI = join(import.meta.dirname, '..', 'dist', 'cli.js');
const REDIRECT = 'http://localhost:9999/callback';
const PASSWORD = 'Cli-Password-42';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI to its end (at most 30 s), with SESAME_* variables of the test environment left out.
 * An offline command on a data dir works where the test servers on that dir keep their state: with
 * SESAME_TEST_STORE=postgres, the dir's database (copy and migrate name theirs).
 */
async function sesame(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SESAME_')));
  const dirAt = args.indexOf('--data-dir');
  const store = dirAt >= 0 && args[0] !== 'copy' && args[0] !== 'migrate' ? await testStoreEnv(args[dirAt + 1]!, env) : {};
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...base, SESAME_WORKERS: '1', SESAME_SIGNING_ALG: 'ES256', ...store, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`sesame ${args.join(' ')} did not finish in 30 s:\n${stderr}`));
    }, 30_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const ok = (result: ApiResult): any => {
  expect(result.status, JSON.stringify(result.body)).toBe(200);
  return result.body;
};

describe('sesame --help', () => {
  it('lists the commands, and each command its options', async () => {
    const options: Record<string, string[]> = {
      export: ['--out', '--org-ids', '--with-passwords', '--with-otp', '--url', '--pat-file', '--data-dir'],
      import: ['--in', '--v1', '--add-to-existing-orgs', '--report', '--url', '--data-dir'],
      keys: ['rotate', '--url', '--data-dir'],
      'admin-pat': ['--new', '--print', '--data-dir'],
      copy: ['--data-dir', '--database-url', 'SESAME_DATABASE_URL', '--from-database'],
      migrate: ['--database-url', '--allow-destructive'],
    };
    // Independent runs, started together.
    const [main, start, ...helps] = await Promise.all([sesame(['--help']), sesame(['start', '--help']), ...Object.keys(options).map((command) => sesame([command, '--help']))]);
    expect(main!.code).toBe(0);
    for (const command of ['start', 'export', 'import', 'keys rotate', 'admin-pat', 'copy', 'migrate']) expect(main!.stdout).toContain(command);

    expect(start!.code).toBe(0);
    expect(start!.stdout).toContain('Usage: sesame start');
    expect(start!.stdout).toContain('SESAME_DATA_DIR');

    Object.entries(options).forEach(([command, flags], i) => {
      const help = helps[i]!;
      expect(help.code, command).toBe(0);
      for (const flag of flags) expect(help.stdout, `${command} ${flag}`).toContain(flag);
    });
  });

  it('answers usage errors with one line and exit 2', async () => {
    const dir = tempDataDir();
    writeFileSync(join(dir, 'bad.json'), '{"orgs":[');
    writeFileSync(join(dir, 'good.json'), '{"orgs":[]}');
    const [unknown, noTarget, badBundle, badSetting, badTimeout] = await Promise.all([
      sesame(['frobnicate']),
      sesame(['export']),
      sesame(['import', '--data-dir', join(dir, 'data'), '--in', join(dir, 'bad.json')]),
      sesame(['start', '--port', 'x']),
      sesame(['import', '--data-dir', join(dir, 'timeout-data'), '--in', join(dir, 'good.json'), '--timeout', 'soon']),
    ]);
    // Refused before the data dir is opened: nothing created for a bad timeout.
    expect(badTimeout!.code).toBe(2);
    expect(badTimeout!.stderr).toMatch(/^sesame: import: --timeout: timeout "soon" is not a duration/);
    expect(existsSync(join(dir, 'timeout-data')), 'nothing created for a bad timeout').toBe(false);
    expect(unknown!.code).toBe(2);
    expect(unknown!.stderr).toMatch(/^sesame: unknown command frobnicate .*\n$/);
    expect(noTarget!.code).toBe(2);
    expect(noTarget!.stderr).toMatch(/^sesame: export: give --url .* or --data-dir .*\n$/);
    expect(badBundle!.code).toBe(2);
    expect(badBundle!.stderr).toMatch(/^sesame: import: --in .*bad\.json is not valid JSON: .*\n$/);
    expect(existsSync(join(dir, 'data')), 'nothing created for a bad bundle').toBe(false);
    rmSync(dir, { recursive: true, force: true });
    expect(badSetting!.code).toBe(2);
    expect(badSetting!.stderr).toContain('SESAME_PORT');
  });
});

describe('sesame export / import / admin-pat / keys rotate', () => {
  // The servers the commands talk to or leave their data dirs to run in this process; the commands
  // run as processes. The data dirs use ES256 keys, as the commands are told to.
  const serve = (dataDir?: string) => startInProcess({ dataDir, env: { SESAME_SIGNING_ALG: 'ES256' } });
  let a: InProcessServer;
  let b: InProcessServer | undefined;
  const dirB = tempDataDir();
  const work = tempDataDir();
  let orgId: string;
  let userId: string;
  let loginName: string;
  let web: WebApp;

  beforeAll(async () => {
    a = await serve();
    const call = (method: string, path: string, body?: unknown, org?: string) => api(a, method, path, { token: a.pat, body, orgId: org });
    orgId = ok(await call('POST', '/management/v1/orgs', { name: 'CLI Moved Org' })).id;
    userId = ok(
      await call(
        'POST',
        '/management/v1/users/human/_import',
        { userName: 'lin', profile: { firstName: 'Lin', lastName: 'Moved' }, email: { email: 'lin@cli.example', isEmailVerified: true }, password: PASSWORD },
        orgId,
      ),
    ).userId;
    loginName = ok(await call('GET', `/management/v1/users/${userId}`, undefined, orgId)).user.preferredLoginName;
    const projectId = ok(await call('POST', '/management/v1/projects', { name: 'CLI Portal' }, orgId)).id;
    const app = ok(
      await call(
        'POST',
        `/management/v1/projects/${projectId}/apps/oidc`,
        {
          name: 'CLI Web',
          redirectUris: [REDIRECT],
          responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
          grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
          appType: 'OIDC_APP_TYPE_WEB',
          authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
        },
        orgId,
      ),
    );
    web = { projectId, appId: app.appId, clientId: app.clientId, clientSecret: app.clientSecret };
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    rmSync(dirB, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('refuses offline work on a data dir a running server holds, naming the dir', async () => {
    const exported = await sesame(['export', '--data-dir', a.dataDir, '--out', join(work, 'never.json')]);
    expect(exported.code).toBe(2);
    expect(exported.stderr).toBe(`sesame: export: data dir ${a.dataDir} is in use by a running Sesame server: stop it, or go through its API with --url and --pat-file\n`);
    expect(existsSync(join(work, 'never.json'))).toBe(false);
    const pat = await sesame(['admin-pat', '--new', '--data-dir', a.dataDir]);
    expect(pat.code).toBe(2);
    expect(pat.stderr).toContain(`data dir ${a.dataDir} is in use`);
    expect(readFileSync(join(a.dataDir, 'admin.pat'), 'utf8').trim()).toBe(a.pat);
  });

  it('exports from a running server, imports offline into a second data dir; a server on it signs the user in', async () => {
    const bundlePath = join(work, 'bundle.json');
    const exported = await sesame(['export', '--url', a.url, '--pat-file', join(a.dataDir, 'admin.pat'), '--org-ids', orgId, '--with-passwords', '--out', bundlePath]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stderr).toMatch(/^sesame: export: exported 1 organization \(1 human user, 1 project, 1 OIDC app.*\) from http:\/\/127\.0\.0\.1:\d+ with passwords, .* to .*bundle\.json\n$/);
    // The bundle holds password hashes: readable by its owner only.
    expect(statSync(bundlePath).mode & 0o777).toBe(0o600);
    const bundle = JSON.parse(readFileSync(bundlePath, 'utf8'));
    expect(bundle.orgs.map((o: any) => o.orgId)).toEqual([orgId]);

    const reportPath = join(work, 'report.json');
    const imported = await sesame(['import', '--data-dir', dirB, '--in', bundlePath, '--report', reportPath]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stderr).toContain(`${dirB} was empty: created the instance`);
    // A's admin, who created the org and stays behind, is reported as a member that cannot come along.
    expect(imported.stderr).toMatch(/imported 1 organization \(1 human user, 1 project, 1 OIDC app.*\) into .*; 1 item skipped or failed:\n/);
    expect(imported.stderr).toMatch(/\n {2}org_member \S+: ID=\S+ Message=user \d+ not found\n$/);
    const report = JSON.parse(readFileSync(reportPath, 'utf8'));
    expect(report.errors.map((e: any) => e.type)).toEqual(['org_member']);
    expect(report.success.orgs[0]).toMatchObject({ orgId, humanUserIds: [userId] });

    b = await serve(dirB);
    const user = ok(await api(b, 'GET', `/management/v1/users/${userId}`, { token: b.pat, orgId }));
    expect(user.user.preferredLoginName).toBe(loginName);
    const authorize = `/oauth/v2/authorize?${new URLSearchParams({ client_id: web.clientId, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 'cli' })}`;
    const done = await signIn(new Agent(b), authorize, { loginName, password: PASSWORD });
    expect(done.location, done.html?.slice(0, 300)).toMatch(/^http:\/\/localhost:9999\/callback\?code=/);
    // The same bundle again, now through the API of the server on B: the org exists, so it is refused;
    // asked to add to it, everything is found to exist, skipped and listed.
    const refused = await sesame(['import', '--in', bundlePath], { SESAME_URL: b.url, SESAME_PAT: b.pat });
    expect(refused.code, refused.stderr).toBe(0);
    expect(refused.stderr).toContain(`org ${orgId}: ID=ORG-lapo2m Message=organization ${orgId} already exists; nothing was imported into it`);
    expect(refused.stderr).not.toContain('human_user');
    const again = await sesame(['import', '--in', bundlePath, '--add-to-existing-orgs'], { SESAME_URL: b.url, SESAME_PAT: b.pat });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/skipped or failed:\n/);
    expect(again.stderr).toContain(`org ${orgId}: ID=IMPORT-Exist1`);
    expect(again.stderr).toContain(`human_user ${userId}: ID=`);
    // An answer without errors (protojson leaves the empty list out) is a clean report, not a crash.
    const emptyPath = join(work, 'empty.json');
    writeFileSync(emptyPath, '{"orgs":[]}');
    const empty = await sesame(['import', '--in', emptyPath], { SESAME_URL: b.url, SESAME_PAT: b.pat });
    expect(empty).toMatchObject({ code: 0, stderr: expect.stringMatching(/imported 0 organizations into http:\/\/127\.0\.0\.1:\d+; nothing skipped\n$/) });
  });

  it('admin-pat --new issues a working token offline and replaces admin.pat (mode 0600)', async () => {
    // B from the previous test, or a fresh data dir started once.
    const server = b ?? (await serve(dirB));
    await server.stop();
    b = undefined;
    // Offline on the stopped dir: an export to stdout, and a key rotation.
    const offline = await sesame(['export', '--data-dir', dirB, '--org-ids', orgId, '--out', '-']);
    expect(offline.code, offline.stderr).toBe(0);
    expect(JSON.parse(offline.stdout).orgs[0].humanUsers.map((u: any) => u.userId)).toEqual([userId]);
    expect(offline.stderr).toMatch(new RegExp(`^sesame: export: exported 1 organization .* from ${dirB}, .* to stdout\\n$`));
    const rotated = await sesame(['keys', 'rotate', '--data-dir', dirB]);
    expect(rotated.code, rotated.stderr).toBe(0);
    const kid = rotated.stdout.trim();

    const where = await sesame(['admin-pat', '--data-dir', dirB]);
    expect(where).toMatchObject({ code: 0, stdout: `${join(dirB, 'admin.pat')}\n` });

    const issued = await sesame(['admin-pat', '--data-dir', dirB, '--new']);
    expect(issued.code, issued.stderr).toBe(0);
    expect(issued.stdout).toBe(`${join(dirB, 'admin.pat')}\n`);
    expect(issued.stderr).toContain('replaced');
    const token = readFileSync(join(dirB, 'admin.pat'), 'utf8').trim();
    expect(token).not.toBe(server.pat);
    expect(issued.stdout + issued.stderr).not.toContain(token);
    expect(statSync(join(dirB, 'admin.pat')).mode & 0o777).toBe(0o600);

    b = await serve(dirB);
    expect(b.pat).toBe(token);
    expect(ok(await api(b, 'GET', '/oauth/v2/keys')).keys[0].kid).toBe(kid);
    ok(await api(b, 'GET', `/management/v1/users/${userId}`, { token, orgId }));
  });

  it('keys rotate against a running server changes the JWKS signing key', async () => {
    const before = ok(await api(a, 'GET', '/oauth/v2/keys')).keys[0].kid;
    const rotated = await sesame(['keys', 'rotate', '--url', a.url, '--pat-file', join(a.dataDir, 'admin.pat')]);
    expect(rotated.code, rotated.stderr).toBe(0);
    const kid = rotated.stdout.trim();
    expect(kid).not.toBe(before);
    const keys = ok(await api(a, 'GET', '/oauth/v2/keys')).keys.map((k: any) => k.kid);
    expect(keys[0]).toBe(kid);
    expect(keys).toContain(before);
  });

  it('answers a wrong token with HTTP 401 in one line and exit 1', async () => {
    const denied = await sesame(['keys', 'rotate', '--url', a.url], { SESAME_PAT: 'not-a-token' });
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/^sesame: keys rotate: http:\/\/127\.0\.0\.1:\d+\/admin\/v1\/keys\/_rotate: HTTP 401: .*\(check --pat-file \/ SESAME_PAT\)\n$/);
  });
});

describe('sesame copy', () => {
  it('copies a stopped data dir into an empty PostgreSQL database, once; refuses a dir a server holds and a database already used', async () => {
    const dataDir = tempDataDir();
    // A data dir's LMDB is what is copied: its servers keep their state there whatever the test store.
    const server = await startInProcess({ dataDir, env: { SESAME_SIGNING_ALG: 'ES256', SESAME_DATABASE_URL: '' } });
    const url = await (await postgresCluster()).database('cli_copy');
    const held = await sesame(['copy', '--data-dir', dataDir, '--database-url', url]);
    expect(held.code).toBe(2);
    expect(held.stderr).toMatch(/^sesame: copy: data dir .* is in use by a running Sesame server/);
    await server.stop();

    expect(await sesame(['copy', '--data-dir', dataDir])).toMatchObject({ code: 2, stderr: expect.stringContaining('--database-url (or SESAME_DATABASE_URL) is required') });
    const copied = await sesame(['copy', '--data-dir', dataDir], { SESAME_DATABASE_URL: url });
    expect(copied.code, copied.stderr).toBe(0);
    const counts = Object.fromEntries(
      copied.stdout
        .trim()
        .split('\n')
        .map((line) => line.split('\t'))
        .map(([store, n]) => [store, Number(n)]),
    );
    // The first start's instance: its org, the admin (machine) and its token, the first person (sesame-admin), the management project with the console's app, two signing keys.
    expect(counts).toMatchObject({ orgs: 1, users: 2, pats: 1, apps: 1, signingKeys: 2 });
    expect(copied.stderr).toContain("needs this data dir's master key");
    const pool = new pg.Pool({ connectionString: url });
    try {
      const { rows } = await pool.query<{ store: string; n: number }>('SELECT store, count(*)::int AS n FROM sesame_directory GROUP BY store');
      expect(Object.fromEntries(rows.map((r) => [r.store, r.n]))).toMatchObject({ orgs: 1, users: 2, pats: 1, apps: 1, signingKeys: 2 });
    } finally {
      await pool.end();
    }

    const again = await sesame(['copy', '--data-dir', dataDir, '--database-url', url]);
    expect(again).toMatchObject({ code: 1, stderr: expect.stringContaining('already holds Sesame data') });

    // And back into a new data dir: a server on it, with the nodes' master key, takes the admin's old token.
    const backDir = tempDataDir();
    const back = await sesame(['copy', '--from-database', '--data-dir', backDir, '--database-url', url]);
    expect(back.code, back.stderr).toBe(0);
    expect(
      Object.fromEntries(
        back.stdout
          .trim()
          .split('\n')
          .map((line) => line.split('\t')),
      ),
    ).toMatchObject({ orgs: '1', users: '2', pats: '1', apps: '1', signingKeys: '2' });
    expect(await sesame(['copy', '--from-database', '--data-dir', backDir, '--database-url', url])).toMatchObject({ code: 1, stderr: expect.stringContaining('already holds Sesame data') });
    // The admin's token file comes along as an operator would bring it (the copy moves the database, not files).
    writeFileSync(join(backDir, 'admin.pat'), readFileSync(join(dataDir, 'admin.pat')));
    const restarted = await startInProcess({
      dataDir: backDir,
      env: { SESAME_SIGNING_ALG: 'ES256', SESAME_DATABASE_URL: '', SESAME_MASTERKEY: readFileSync(join(dataDir, 'masterkey'), 'utf8').trim() },
    });
    try {
      const pat = readFileSync(join(dataDir, 'admin.pat'), 'utf8').trim();
      expect((await api({ url: restarted.url }, 'GET', '/management/v1/orgs/me', { token: pat })).status).toBe(200);
    } finally {
      await restarted.close();
      rmSync(backDir, { recursive: true, force: true });
    }
  });
});

describe('sesame migrate', () => {
  it("brings a database's schema up to this build's once, and says so", async () => {
    const url = await (await postgresCluster()).database('cli_migrate');
    expect(await sesame(['migrate'])).toMatchObject({ code: 2, stderr: expect.stringContaining('--database-url (or SESAME_DATABASE_URL) is required') });
    const first = await sesame(['migrate', '--database-url', url]);
    expect(first).toMatchObject({ code: 0, stdout: `schema version ${MIGRATIONS.at(-1)!.version} (applied ${MIGRATIONS.map((m) => m.version).join(', ')})\n` });
    expect(await sesame(['migrate'], { SESAME_DATABASE_URL: url })).toMatchObject({ code: 0, stdout: `schema version ${MIGRATIONS.at(-1)!.version} (nothing to apply)\n` });
    const unreachable = await sesame(['migrate', '--database-url', 'postgres://postgres@127.0.0.1:1/none']);
    expect(unreachable).toMatchObject({ code: 1, stderr: expect.stringMatching(/^sesame: migrate: could not migrate the database/) });
  });
});
