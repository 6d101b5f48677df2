import { testStoreEnv } from './postgres.js';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as AppModule from '../../src/app.js';
import type * as ConfigModule from '../../src/config.js';
import type * as LogModule from '../../src/util/log.js';
import type * as FramingModule from '../../src/http/framing.js';
import { ManualClock } from '../../src/util/clock.js';
import type * as AppKeyModule from '../../src/actors/keys.js';
import type * as PoolModule from '../../src/workers/pool.js';
import { tempDataDir, type ServerAddress } from './server.js';

/**
 * Runs Sesame inside the test process (the composition root, dist/app.js) with a clock the test
 * moves: real port, real LMDB, real worker pool; only the clock and the log output are the
 * test's. Starting it costs a fraction of a spawned `node dist/main.js`, so every suite where the
 * process itself does not matter runs this way; behaviour that depends on time passing (expiry,
 * sweeping, key rotation, max_age) moves the clock instead of sleeping. The code is the compiled
 * dist/ (built by the global setup), as the spawned servers run it, so the crypto workers load as
 * in production.
 *
 * The clock, the log level and sink, and the framing policy are process-wide in Sesame: a second
 * server started while one runs takes them over, and stopping it hands them back (the clock via
 * startApp, the framing policy and log capture here); when the last one stops they are as in a new
 * process. Servers that need different clocks or settings at the same moment cannot share one
 * process.
 */
const root = new URL('../../', import.meta.url);
const dist = <T>(path: string): Promise<T> => import(pathToFileURL(join(root.pathname, 'dist', path)).href) as Promise<T>;

/**
 * Stands still until the test moves it: nothing in a test depends on how fast the machine is.
 * Sesame's ManualClock (its state is shared with the server's HTTP threads), from the sources.
 */
export class TestClock extends ManualClock {
  /**
   * A clock that follows the system clock throughout (it can still be advanced): for a test where
   * something outside the test's control reads the time, such as a browser typing a TOTP code.
   */
  static followingSystem(): TestClock {
    const clock = new TestClock();
    clock.follows = true;
    return clock;
  }

  /**
   * Runs `work` with the clock following the system clock, for a client library that dates what
   * it signs by the system clock (openid-client's private_key_jwt): server and client then read
   * the same time however long the work takes. Afterwards the clock stands still again.
   */
  async following<T>(work: () => Promise<T>): Promise<T> {
    const wasFollowing = this.follows;
    this.follows = true;
    try {
      return await work();
    } finally {
      this.follows = wasFollowing;
    }
  }
}

export interface InProcessServer extends ServerAddress {
  readonly port: number;
  readonly dataDir: string;
  readonly clock: TestClock;
  readonly app: AppModule.RunningApp;
  /** Everything the server logged so far (one JSON line each), as a spawned server's output. */
  logs(): string;
  /** Runs the periodic work now (sweeping, key rotation when due), as its timers would. */
  tick(): Promise<void>;
  /** Shuts down (the data dir stays). */
  stop(): Promise<void>;
  /** Shuts down and removes the data dir (unless keepData or it was given). */
  close(options?: { keepData?: boolean }): Promise<void>;
}

/** The in-process servers running now, oldest first: they all see the log lines written meanwhile. */
const live: { output: string[]; logLevel: LogModule.LogLevel; app: AppModule.RunningApp; stopping?: boolean }[] = [];

/**
 * Signing key pairs made once per test process and handed out in turn (an RSA pair takes ~230 ms
 * and every fresh server needs two). Four per algorithm, so a rotation still changes the key.
 */
const KEY_POOL_SIZE = 4;
const keyPools = new Map<string, { keys: Promise<AppKeyModule.GeneratedKey>[]; next: number }>();
async function pooledSigningKey(alg: Parameters<AppKeyModule.KeyGenerator>[0]): Promise<AppKeyModule.GeneratedKey> {
  const { generateSigningKey } = await dist<typeof AppKeyModule>('actors/keys.js');
  let pool = keyPools.get(alg);
  if (!pool) keyPools.set(alg, (pool = { keys: [], next: 0 }));
  const slot = pool.next++ % KEY_POOL_SIZE;
  return (pool.keys[slot] ??= generateSigningKey(alg));
}

/**
 * Crypto worker pools made once per test process, one per thread count, and shared by its
 * in-process servers (a thread costs ~0.1-0.2 s of CPU to start; most tests need a few
 * milliseconds of it). Never closed: idle threads do not keep the process alive.
 */
const cryptoPools = new Map<number, Promise<PoolModule.CryptoPool>>();
function sharedCryptoPool(threads: number): Promise<PoolModule.CryptoPool> {
  let pool = cryptoPools.get(threads);
  if (!pool) cryptoPools.set(threads, (pool = dist<typeof PoolModule>('workers/pool.js').then(({ CryptoPool }) => new CryptoPool(threads))));
  return pool;
}

export async function startInProcess(options: { env?: Record<string, string>; dataDir?: string; clock?: TestClock } = {}): Promise<InProcessServer> {
  const [{ startApp }, { loadConfig }, { setLogLevel, setLogSink }, { setFramingPolicy }] = await Promise.all([
    dist<typeof AppModule>('app.js'),
    dist<typeof ConfigModule>('config.js'),
    dist<typeof LogModule>('util/log.js'),
    dist<typeof FramingModule>('http/framing.js'),
  ]);
  const dataDir = options.dataDir ?? tempDataDir();
  const removeTemp = () => {
    if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  let config: ConfigModule.Config;
  const store = await testStoreEnv(dataDir, options.env);
  try {
    config = loadConfig(
      {
        SESAME_PORT: '0',
        SESAME_HOST: '127.0.0.1',
        SESAME_DATA_DIR: dataDir,
        SESAME_WORKERS: '1',
        SESAME_LOG_LEVEL: 'info',
        SESAME_HTTP_THREADS: process.env.SESAME_HTTP_THREADS ?? '',
        ...store,
        ...options.env,
      },
      [],
    );
  } catch (error) {
    removeTemp();
    throw error;
  }
  setLogLevel(config.logLevel);
  const entry: (typeof live)[number] = { output: [], logLevel: config.logLevel, app: undefined! };
  live.push(entry);
  setLogSink((line) => {
    for (const server of live) server.output.push(line);
  });
  const clock = options.clock ?? new TestClock();
  let app: AppModule.RunningApp;
  try {
    app = await startApp(config, { clock, generateSigningKey: pooledSigningKey, cryptoPool: await sharedCryptoPool(config.workers) });
  } catch (error) {
    forget();
    removeTemp();
    throw error;
  }
  entry.app = app;
  function forget(): void {
    live.splice(live.indexOf(entry), 1);
    // A server stopping too (two stopped at once) has closed its store: its settings are not read.
    const previous = live.filter((other) => !other.stopping).at(-1);
    if (!previous) {
      // As a new process would start: nothing a stopped server set may carry over to the next one
      // (a restart on the same data dir must find its policy in storage, not in this process).
      setLogSink(undefined);
      setFramingPolicy({ enableIframeEmbedding: false, allowedOrigins: [] });
      return;
    }
    // The server still running serves its own pages again (this one may have changed the policy).
    setLogLevel(previous.logLevel);
    if (previous.app) setFramingPolicy(previous.app.ctx.settings.securityPolicy());
  }
  let stopped: Promise<void> | undefined;
  const stop = () => {
    entry.stopping = true;
    return (stopped ??= app.shutdown().finally(forget));
  };
  return {
    url: `http://127.0.0.1:${app.port}`,
    issuer: app.issuer,
    port: app.port,
    dataDir,
    pat: readFileSync(join(dataDir, 'admin.pat'), 'utf8').trim(),
    clock,
    app,
    logs: () => entry.output.map((line) => `${line}\n`).join(''),
    tick: () => app.tick(),
    stop,
    async close(closeOptions = {}) {
      await stop();
      if (!closeOptions.keepData) removeTemp();
    },
  };
}
