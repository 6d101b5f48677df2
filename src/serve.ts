import { startupBanner } from './banner.js';
import { ConfigError, helpText, loadConfig } from './config.js';
import { log, setLogLevel } from './util/log.js';

/**
 * Runs the server until SIGTERM/SIGINT: `node dist/main.js [options]` and `sesame start [options]`.
 * Exit 2 on bad configuration or a port or data dir in use, 1 when start-up fails otherwise.
 */
export async function serve(argv: readonly string[], usage?: string): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(helpText(usage));
    return;
  }
  // Exit 2 for anything the operator fixes in the settings: a bad value, a port or data dir in use.
  const configErrorExit = (error: unknown): never => {
    if (error instanceof ConfigError) {
      process.stderr.write(`sesame: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  };
  let config;
  try {
    config = loadConfig(process.env, argv);
  } catch (error) {
    return configErrorExit(error);
  }
  setLogLevel(config.logLevel);
  // A signal during start-up is answered once the start is done (a stop half-way through start
  // would leave the data dir locked or the port half-bound): the server then stops at once, exit 0.
  // A second signal while the start still runs (one that hangs) stops the process at once.
  let signalled: string | undefined;
  let stop = (signal: string) => {
    if (signalled !== undefined) process.exit(130);
    signalled = signal;
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // Loaded once the settings are known to be good: a bad setting is answered at once, without
  // first loading the whole server (LMDB, uWS, the protocol code).
  const { startApp } = await import('./app.js');
  const app = await startApp(config).catch(configErrorExit);
  process.stdout.write(startupBanner(config, app));

  let stopping = false;
  stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    app.shutdown().then(
      () => {
        log.info('stopped');
        process.exit(0);
      },
      (error: unknown) => {
        log.error('shutdown failed', { error: String(error) });
        process.exit(1);
      },
    );
  };
  if (signalled) stop(signalled);
}

export function startFailed(error: unknown): never {
  // Not a setting to fix (those exit 2 above): the stack is what tells what broke.
  log.error('start-up failed', { error: error instanceof Error ? error.message : String(error), ...(error instanceof Error && error.stack ? { stack: error.stack } : {}) });
  process.exit(1);
}
