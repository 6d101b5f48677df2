import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { MAIN_THREAD_NODE_FLAGS } from '../../src/util/thread-memory.js';
import { testStoreEnv } from './postgres.js';

/**
 * Starts the real server (`node dist/main.js`) on an ephemeral port with a real LMDB data dir in a
 * temp directory, and reads the admin PAT the first start writes.
 */
/** dist/main.js of the project, found from here whether this file runs as TS (tests) or from dist-bench/. */
function findMain(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('project root not found');
    dir = parent;
  }
  return join(dir, 'dist', 'main.js');
}
const MAIN = findMain();

export interface TestServer {
  /** The issuer the server announces (http://localhost:<port> unless SESAME_ISSUER is set). */
  readonly issuer: string;
  /** Where the server is reached: http://127.0.0.1:<port>. */
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** The bootstrap admin's personal access token (IAM_OWNER). */
  readonly pat: string;
  readonly process: ChildProcess;
  /** Everything the server logged so far. */
  logs(): string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Stops the server and removes its data dir (unless keepData). */
  close(options?: { keepData?: boolean }): Promise<void>;
}

/** What the API and sign-in helpers need of a server, spawned or in-process. */
export type ServerAddress = Pick<TestServer, 'url' | 'issuer' | 'pat'>;

export interface StartOptions {
  dataDir?: string;
  env?: Record<string, string>;
  args?: string[];
  /** The admin PAT, for a node that did not start the instance (on PostgreSQL only the first node writes it). */
  pat?: string;
}

export function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'sesame-test-'));
}

/** The environment a test server runs with: any free port on loopback, one worker, this data dir. */
export function serverEnv(dataDir: string): NodeJS.ProcessEnv {
  return { ...process.env, SESAME_PORT: '0', SESAME_HOST: '127.0.0.1', SESAME_DATA_DIR: dataDir, SESAME_WORKERS: '1', SESAME_LOG_LEVEL: 'info' };
}

export async function startServer(options: StartOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDataDir();
  // Started as `npm start` starts it (its node flags included).
  const child = spawn(process.execPath, [...MAIN_THREAD_NODE_FLAGS, MAIN, ...(options.args ?? [])], {
    // ES256 unless a suite asks for another: a fresh server makes two signing keys, and RS256 ones
    // take ~230 ms each. RS256, the default users get, runs in the in-process suites and the README test.
    env: { ...serverEnv(dataDir), SESAME_SIGNING_ALG: 'ES256', ...(await testStoreEnv(dataDir, options.env)), ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  // 'close', not 'exit': it comes once the output pipes are drained, so a failed start shows what the server printed.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));

  const { port, issuer } = await new Promise<{ port: number; issuer: string }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 20_000);
    const onData = () => {
      for (const line of output.split('\n')) {
        if (!line.includes('"sesame listening"')) continue;
        const entry = JSON.parse(line) as { port: number; issuer: string };
        clearTimeout(timer);
        child.stderr!.off('data', onData);
        resolve(entry);
        return;
      }
    };
    child.stderr!.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${output}`));
    });
  });

  const pat = options.pat ?? readFileSync(join(dataDir, 'admin.pat'), 'utf8').trim();
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    return exited;
  };
  return {
    issuer,
    url: `http://127.0.0.1:${port}`,
    port,
    dataDir,
    pat,
    process: child,
    logs: () => output,
    stop,
    async close(closeOptions = {}) {
      await stop('SIGTERM');
      if (!closeOptions.keepData && !options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A port free on loopback now, for a server whose port (and so its issuer) a test must know before it starts. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
