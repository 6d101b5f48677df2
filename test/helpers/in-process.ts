import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as AppModule from '../../src/app.js';
import type * as ConfigModule from '../../src/config.js';
import type * as LogModule from '../../src/util/log.js';
import type { Clock } from '../../src/util/clock.js';
import { tempDataDir, type ServerAddress } from './server.js';

/**
 * Runs Sesame inside the test process with a clock the test moves, for behaviour that depends on
 * time passing (expiry, sweeping, key rotation, max_age). Real port, real LMDB, real worker pool:
 * only the clock is the test's. The code is the compiled dist/ (built by the global setup), as
 * the spawned servers run it, so the crypto workers load as in production.
 */
const root = new URL('../../', import.meta.url);
const dist = <T>(path: string): Promise<T> => import(pathToFileURL(join(root.pathname, 'dist', path)).href) as Promise<T>;

/** Stands still until the test moves it: nothing in a test depends on how fast the machine is. */
export class TestClock implements Clock {
  constructor(private at = Date.now()) {}

  now(): number {
    return this.at;
  }

  advance(ms: number): void {
    this.at += ms;
  }
}

export interface InProcessServer extends ServerAddress {
  readonly port: number;
  readonly dataDir: string;
  readonly clock: TestClock;
  readonly app: AppModule.RunningApp;
  /** Runs the periodic work now (sweeping, key rotation when due), as its timers would. */
  tick(): Promise<void>;
  /** Shuts down (the data dir stays). */
  stop(): Promise<void>;
  /** Shuts down and removes the data dir (unless keepData or it was given). */
  close(options?: { keepData?: boolean }): Promise<void>;
}

export async function startInProcess(options: { env?: Record<string, string>; dataDir?: string; clock?: TestClock } = {}): Promise<InProcessServer> {
  const [{ startApp }, { loadConfig }, { setLogLevel }] = await Promise.all([
    dist<typeof AppModule>('app.js'),
    dist<typeof ConfigModule>('config.js'),
    dist<typeof LogModule>('util/log.js'),
  ]);
  const dataDir = options.dataDir ?? tempDataDir();
  const config = loadConfig(
    { SESAME_PORT: '0', SESAME_HOST: '127.0.0.1', SESAME_DATA_DIR: dataDir, SESAME_WORKERS: '1', SESAME_LOG_LEVEL: 'warn', ...options.env },
    [],
  );
  setLogLevel(config.logLevel);
  const clock = options.clock ?? new TestClock();
  const app = await startApp(config, { clock });
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= app.shutdown());
  return {
    url: `http://127.0.0.1:${app.port}`,
    issuer: app.issuer,
    port: app.port,
    dataDir,
    pat: readFileSync(join(dataDir, 'admin.pat'), 'utf8').trim(),
    clock,
    app,
    tick: () => app.tick(),
    stop,
    async close(closeOptions = {}) {
      await stop();
      if (!closeOptions.keepData && !options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
