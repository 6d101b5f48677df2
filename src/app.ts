import { join } from 'node:path';
import type { KeysActor } from './actors/keys.js';
import { ConfigError, type Config } from './config.js';
import { GIVEN_UP_KEPT_MS } from './services/mail/mailer.js';
import type { Ports } from './services/ports.js';
import { routes } from './http/routes/index.js';
import { describeRoutes, ListenError, startHttpServer, type HttpServer } from './http/server.js';
import { ReplayGuardActor } from './actors/replay-guard.js';
import { FollowedWrites } from './threads/followed-writes.js';
import { openStorage, type NodeStorage, type Storage } from './storage/db.js';
import { newNodeShared, nodeConnections, openFailureOf, openPostgresNode, postgresSettingsOf, type PostgresNode } from './storage/postgres/node.js';
import { DestructiveMigrationPending, SchemaTooNew } from './storage/postgres/migrations.js';
import { DIRECTORY_POLL_MS, FollowedOnPostgres } from './threads/followed-on-postgres.js';
import { answeredFromCurrentCopies } from './threads/current-copies.js';
import { buildIndexOnce } from './storage/index-once.js';
import { sessionIndexEntries } from './actors/user-sessions.js';
import { deviceIndexEntries } from './actors/device-authorizations.js';
import { DataDirInUseError, lockDataDir } from './storage/data-dir-lock.js';
import { DataDirError, prepareDataDir } from './storage/data-dir.js';
import { clock as currentClock, installClock, installedClockCell, type Clock } from './util/clock.js';
import { startAcceptors, type Acceptors } from './threads/acceptors.js';
import { composePorts } from './compose.js';
import { LeasesActor } from './actors/leases.js';
import type { MasterKey } from './crypto/master-key.js';
import { MasterKeyMismatchError, openDirectory, openMasterKey } from './directory.js';
import { ensureConsoleApp } from './services/console-app.js';
import type { KeyGenerator } from './actors/keys.js';
import { startIdleTrim } from './util/idle-trim.js';
import { log } from './util/log.js';
import { urlHost } from './util/url-host.js';
import { CryptoPool } from './workers/pool.js';
import { chooseSignerMode, InlineSigner, PoolSigner } from './workers/signer.js';
import { SignatureCheck } from './workers/signature-check.js';
import { createMetricsMemory } from './observability/metrics-memory.js';
import { addRequestsRegion } from './observability/recorder.js';
import { observeThread } from './observability/thread-observability.js';
import { osThreadId } from './util/os-thread-id.js';
import { ScrapeListenError, startScrapeListener, type ScrapeListener } from './observability/scrape-listener.js';

/** How long the key rotation lease lasts unrenewed: twice the longest gap between the rotation timer's looks (an hour). */
const KEY_ROTATION_LEASE_MS = 2 * 3_600_000;

/** Failure windows are kept this long after their last failure (the longest counted: open registrations per address, an hour). */
const FAILURE_WINDOWS_KEPT_MS = 60 * 60_000;
/**
 * How long the directory's change feed keeps an entry: an HTTP thread that served no request for
 * longer loads its copy whole at its next request instead of taking the changes one by one.
 */
const DIRECTORY_LOG_KEPT_MS = 10 * 60_000;

/**
 * Wires config → storage → actors → worker pool → HTTP, and tears it down in reverse order.
 */
export interface RunningApp {
  readonly port: number;
  readonly issuer: string;
  /** The port of the metrics listener (SESAME_METRICS_PORT; the one the OS chose for 0), when metrics are on. */
  readonly metricsPort: number | undefined;
  /**
   * The main thread's parts, its copy of the directory current as of the read (it takes what the
   * other threads committed) on LMDB; on PostgreSQL as of its last look (see caughtUp).
   */
  readonly ctx: Ports;
  /** Resolves once the main thread's copy of the directory holds what was committed before the call (on PostgreSQL a look at the database). */
  caughtUp(): Promise<void>;
  /**
   * Runs the periodic work now, as its timers do: sweeps expired state, rotates the signing key
   * when due and delivers the back-channel logouts due (resolving once their attempts ended). For
   * tests that move the clock.
   */
  tick(): Promise<void>;
  /** Requests each HTTP thread received so far, the main thread's first (one entry per SESAME_HTTP_THREADS). */
  requestsPerThread(): Promise<number[]>;
  /** Requests each acceptor thread handed to the main thread so far for what only it serves (empty with one HTTP thread; not those handed over while a thread's directory copy was being reloaded). */
  requestsHandedOver(): number[];
  /** Requests each acceptor thread handed to the main thread while its copy of the directory was behind (too far to take the changes one by one, and held back from loading whole). */
  requestsHandedOverWhileBehind(): number[];
  /** How often each acceptor thread loaded its copy of the directory whole (empty with one HTTP thread). */
  wholeDirectoryLoads(): Promise<number[]>;
  /** Stop accepting, finish in-flight requests, flush storage, stop workers. */
  shutdown(): Promise<void>;
}

export interface StartOptions {
  /**
   * The time the app runs on (default: the system clock). Process-wide while the app runs; only
   * this programmatic option sets it, so tests can move time without a setting that could.
   */
  clock?: Clock;
  /**
   * Where signing key pairs come from (default: fresh ones from node:crypto). Programmatic only,
   * like the clock: the in-process tests hand in pairs made once, since RSA generation dominates a start.
   */
  generateSigningKey?: KeyGenerator;
  /**
   * The crypto worker pool (default: a new one of `config.workers` threads, closed at shutdown).
   * Programmatic only: the in-process tests share one per thread count across the servers of a
   * test process, since starting threads costs more CPU than most of those tests. A pool handed in
   * is left running at shutdown; its owner closes it.
   */
  cryptoPool?: CryptoPool;
}

export async function startApp(config: Config, options: StartOptions = {}): Promise<RunningApp> {
  // The data dir is checked first (exists or can be created, writable, takes files), then locked:
  // a second process on it must change nothing.
  const dataDirError = (reason: string) => new ConfigError(`SESAME_DATA_DIR (--data-dir) = ${JSON.stringify(config.dataDir)}: ${reason}`);
  try {
    prepareDataDir(config.dataDir);
  } catch (error) {
    if (error instanceof DataDirError) throw dataDirError(error.reason);
    throw error;
  }
  const lock = await lockDataDir(config.dataDir).catch((error: unknown) => {
    if (error instanceof DataDirInUseError) throw dataDirError('in use by another Sesame process; stop it or choose another data dir');
    throw error;
  });
  const installedClock = options.clock ? installClock(options.clock) : () => {};
  // Metrics count from here on, start-up's commits included; the tracing SDK loads only when configured.
  const metricsMemory = config.metricsPort !== undefined ? createMetricsMemory(config.httpThreads) : undefined;
  let stopObserving: () => Promise<void>;
  try {
    stopObserving = await observeThread(metricsMemory, 0, config.tracing);
  } catch (error) {
    installedClock();
    await lock.release();
    throw error;
  }
  /** Hands back what this app set for the whole process (the clock, the metrics recorder, the tracer). */
  const restoreProcessWide = async () => {
    installedClock();
    await stopObserving();
  };
  // Listening comes before anything is written to the data dir (LMDB, a generated master key): a
  // port in use is refused with the dir as it was. The issuer's host is the instance domain; with
  // port 0 it is known only after listening, so the routes are mounted once the context exists.
  const threaded = config.httpThreads > 1;
  let storage: NodeStorage;
  /** The LMDB environment (without SESAME_DATABASE_URL): its threads share it through fresh reads and its own change feed. */
  let lmdb: Storage | undefined;
  /** The PostgreSQL node (SESAME_DATABASE_URL): its copies follow the database's change feed. */
  let postgres: PostgresNode | undefined;
  let followed: FollowedWrites | undefined;
  let followedOnPostgres: FollowedOnPostgres | undefined;
  /** Before each request (and each logout delivery pass, tick(), a read of ctx): fresh reads, and the directory copy follows the other threads' writes. */
  const catchUp = () => {
    lmdb?.freshReads();
    followed?.catchUp();
  };
  let pool: CryptoPool | undefined;
  let server: HttpServer;
  try {
    server = await startHttpServer(
      config.host,
      config.port,
      // With acceptor threads beside it, this thread's reads must also see what they commit (opaque tokens).
      // And its copy of the directory takes the people they changed (FollowedWrites).
      {
        trustedProxies: config.trustedProxies,
        ...(threaded
          ? {
              sharedPort: 'first',
              beforeRequest: () => catchUp(),
            }
          : {}),
      },
    );
  } catch (error) {
    await restoreProcessWide();
    await lock.release();
    throw listenConfigError(error);
  }
  const closeServer = async () => {
    await server.drain(0);
    server.close();
  };
  // The metrics port too is refused before anything is written. Its figures are read at each scrape,
  // so storage and the pool, opened below, are looked up then.
  let scrapeListener: ScrapeListener | undefined;
  if (metricsMemory) {
    try {
      // prom-client is loaded only when metrics are on.
      const { createExposition } = await import('./observability/exposition.js');
      const exposition = createExposition({
        memory: metricsMemory,
        routePatterns: () => server.routeTable().map((route) => route.pattern),
        // Zeros for a scrape that comes before storage is open.
        lmdb: () => lmdb?.sizes() ?? { mapSize: 0, usedBytes: 0, readers: 0 },
        poolQueues: () => pool?.queueSizes() ?? { crypto: 0, password: 0 },
        poolThreads: () => pool?.threadCounts() ?? { crypto: 0, password: 0 },
      });
      scrapeListener = await startScrapeListener({ host: config.metricsHost, port: config.metricsPort!, token: config.metricsToken, exposition });
    } catch (error) {
      await closeServer();
      await restoreProcessWide();
      await lock.release();
      throw metricsListenConfigError(error, config);
    }
  }
  const closeListeners = async () => {
    await scrapeListener?.close();
    await closeServer();
  };
  /** On PostgreSQL, what the threads share: the last directory change any of them committed (read-your-writes within the node). */
  const postgresShared = newNodeShared();
  if (config.databaseUrl) {
    try {
      storage = postgres = await openPostgresNode(postgresSettingsOf(config), postgresShared);
    } catch (error) {
      await closeListeners();
      await restoreProcessWide();
      await lock.release();
      const reason = error instanceof SchemaTooNew || error instanceof DestructiveMigrationPending ? error.message : `cannot open the database: ${openFailureOf(error, config)}`;
      throw new ConfigError(`SESAME_DATABASE_URL (--database-url): ${reason}`);
    }
  } else {
    try {
      storage = lmdb = openStorage(config.dataDir, config.durability);
    } catch (error) {
      await closeListeners();
      await restoreProcessWide();
      await lock.release();
      // The directory takes files (checked above), so LMDB's own refusal is about this file system.
      throw dataDirError(`LMDB cannot open its database there: ${error instanceof Error ? error.message : String(error)}`);
    }
    // Data dirs from before the flows' indexes get them once (the indexes are read by every thread).
    buildIndexOnce(lmdb.stores.userSessions, lmdb.stores.sessionIndex, sessionIndexEntries);
    buildIndexOnce(lmdb.stores.deviceAuthorizations, lmdb.stores.deviceAuthorizationIndex, deviceIndexEntries);
  }
  let keys: KeysActor | undefined;
  let sweeper: NodeJS.Timeout | undefined;
  let logoutDeliveries: Ports['logoutDeliveries'] | undefined;
  let mailer: Ports['mailer'] | undefined;
  let acceptors: Acceptors | undefined;
  try {
    const issuer = config.issuer ?? `http://localhost:${server.port}`;
    // On PostgreSQL the key check, the bootstrap and the first signing key happen in this node's
    // start turn: once, whichever node starts first; the others find them made.
    const inStartTurn = <T>(work: () => Promise<T>) => (postgres ? postgres.inStartTurn(work) : work());
    const { masterKey, directory } = await inStartTurn(async () => {
      let masterKey: MasterKey;
      try {
        masterKey = await openMasterKey(storage, config);
      } catch (error) {
        // A key that does not open the data dir (or the database) is a setting to change (exit 2), like any other.
        if (error instanceof MasterKeyMismatchError) {
          throw new ConfigError(`SESAME_MASTERKEY (--master-key): ${error.message}${postgres ? ' (every node on one database needs the same master key: see docs/multi-node.md)' : ''}`);
        }
        throw error;
      }
      const directory = await openDirectory(storage, masterKey, config, { issuer, signingAlg: config.signingAlg, generateKey: options.generateSigningKey });
      await ensureConsoleApp(directory.orgs, directory.clients, directory.instance, issuer);
      return { masterKey, directory };
    });
    pool = options.cryptoPool ?? new CryptoPool(config.workers);

    let ready = false;
    const { orgs, clients, instance } = directory;
    keys = directory.keys;
    const signerMode = chooseSignerMode(config.signer, undefined, config.httpThreads);
    const signer = signerMode === 'pool' ? new PoolSigner(pool) : new InlineSigner();
    // Beside acceptor threads that check signatures themselves, this thread does too (they all serve alike).
    const signatures = threaded && signerMode === 'inline' ? new SignatureCheck() : pool;
    const replayGuard = new ReplayGuardActor(storage.records);
    // Leases in the store: one node (and in it one thread) sweeps and rotates keys at a time, and a
    // person's password checks run one at a time whichever thread or node serves them (alone: one
    // HTTP thread on a locked data dir, this thread's turns only).
    const leases = new LeasesActor(storage.records, !threaded && !postgres);
    const cryptoPool = pool;
    const ctx: Ports = composePorts({
      config,
      issuer,
      storage,
      masterKey,
      instance,
      orgs,
      clients,
      keys,
      signer,
      signatures,
      replayGuard,
      deliversLogouts: { beforePass: catchUp },
      pool: cryptoPool,
      leases,
      // On PostgreSQL: not while the node cannot hear the other nodes' changes (the database unreachable).
      isReady: () => ready && (postgres?.changeFeed.connection().listening ?? true),
    });
    logoutDeliveries = ctx.logoutDeliveries;
    mailer = ctx.mailer;
    const { issuedTokens, userSessions, authCodes, refreshTokens, authRequests, pushedRequests, deviceAuthorizations, failureWindows, loginSecurity, userCodes, activity } = ctx;
    const mails = ctx.mailer;
    // This thread's copy follows what the others write (the login's, the management API's).
    if (threaded && lmdb) followed = new FollowedWrites(lmdb, { orgs, clients, keys, storage, settings: ctx.settings });
    let table = routes(ctx);
    if (postgres) {
      // This node's copies follow the other nodes' directory commits (notified, and looked for each second).
      followedOnPostgres = new FollowedOnPostgres(
        postgres.directory,
        postgres.reader,
        { orgs, clients, keys, storage, settings: ctx.settings },
        postgres.changeFeed,
        postgres.loadedThrough(),
        postgres.position,
      );
      followedOnPostgres.follow(DIRECTORY_POLL_MS);
      table = answeredFromCurrentCopies(table, followedOnPostgres, ctx);
    }
    if (metricsMemory) {
      // Before any route is served: requests count under their route's index from the first one.
      addRequestsRegion(metricsMemory, table.length);
    }
    if (threaded) {
      // Each loads its copy of the directory now, and joins the port once this thread is ready (below).
      acceptors = await startAcceptors(
        config.httpThreads - 1,
        describeRoutes(table),
        server,
        { passwords: cryptoPool },
        {
          config,
          issuer,
          port: server.port,
          // On PostgreSQL each thread follows the database itself; they share the last commit's number.
          sharedCounters: lmdb?.sharedCounters ?? postgresShared,
          clockCell: installedClockCell(),
          metrics: metricsMemory,
        },
      );
    }
    const threads = acceptors;
    const sweep = () => {
      return Promise.all([
        authRequests.sweep(),
        issuedTokens.sweep(),
        replayGuard.sweep(),
        userSessions.sweep(),
        loginSecurity.sweep(),
        authCodes.sweep(),
        refreshTokens.sweep(),
        deviceAuthorizations.sweep(),
        pushedRequests.sweep(),
        failureWindows.sweep(FAILURE_WINDOWS_KEPT_MS),
        userCodes.sweep(currentClock.now()),
        mails.outbox.sweep(currentClock.now() - GIVEN_UP_KEPT_MS),
        storage.directoryWrites.pruneFeed(currentClock.now() - DIRECTORY_LOG_KEPT_MS),
        config.activityRetention > 0 ? activity.prune(currentClock.now() - config.activityRetention) : 0,
      ]);
    };
    // The sweep's and the key rotation's leases are renewed each time (the rotation timer looks at least hourly).
    keys.rotateOnlyWhile(() => leases.hold('key-rotation', KEY_ROTATION_LEASE_MS));
    sweeper = setInterval(() => {
      leases
        .hold('sweep', 2 * config.sweepInterval)
        .then((held) => (held ? sweep() : undefined))
        .catch((error: unknown) => log.error('sweep failed', { error: String(error) }));
    }, config.sweepInterval);
    sweeper.unref();
    const deliveries = logoutDeliveries;
    deliveries.start();
    mails.start();
    // Readiness and the first answer come together: until the routes are mounted the port answers
    // nothing, and the acceptor threads join it only now, so no thread serves a route while /readyz
    // would still say 503 (a load balancer sees one state).
    server.mount(table);
    ready = true;
    await threads?.join();
    const trimmer = startIdleTrim(server.requestsServed);
    log.info('sesame listening', {
      issuer,
      port: server.port,
      host: config.host,
      dataDir: config.dataDir,
      ...(postgres ? { store: 'postgresql', database: redactedUrl(config.databaseUrl!), databaseConnections: nodeConnections(config) } : { store: 'lmdb' }),
      adminPat: join(config.dataDir, 'admin.pat'),
      signingAlg: config.signingAlg,
      signer: signerMode,
      httpThreads: config.httpThreads,
      // Which of the process's tasks serve HTTP (the main thread first), for per-thread CPU figures.
      httpThreadIds: [osThreadId(), ...(threads?.osThreadIds() ?? [])].filter((id) => id !== undefined),
      workers: cryptoPool.threads,
      passwordWorkers: cryptoPool.passwordThreads,
      ...(scrapeListener ? { metrics: `http://${urlHost(config.metricsHost)}:${scrapeListener.port}/metrics` } : {}),
      ...(config.tracing ? { tracing: config.tracing.endpoint } : {}),
    });

    const keysActor = keys;
    return {
      port: server.port,
      issuer,
      metricsPort: scrapeListener?.port,
      // As of the read: the main thread's copy of the directory takes what the other threads committed first.
      get ctx() {
        catchUp();
        return ctx;
      },
      async caughtUp() {
        catchUp();
        await followedOnPostgres?.look();
      },
      async tick() {
        catchUp();
        await followedOnPostgres?.look();
        await sweep();
        await keysActor.rotateIfDue();
        await deliveries.deliverDue();
        await mails.deliverDue();
      },
      requestsPerThread: () => (threads ? threads.served() : Promise.resolve([server.requestsServed()])),
      requestsHandedOver: () => threads?.handedOver() ?? [],
      requestsHandedOverWhileBehind: () => threads?.handedOverWhileBehind() ?? [],
      wholeDirectoryLoads: () => threads?.wholeDirectoryLoads() ?? Promise.resolve([]),
      async shutdown() {
        ready = false;
        clearInterval(sweeper);
        followedOnPostgres?.stop();
        trimmer.stop();
        keysActor.stop();
        // Attempts under way are cut short; their logouts stay queued for the next start.
        await deliveries.stop();
        await mails.stop();
        // Acceptors first: what they still forward is answered by this thread, which drains after them.
        await threads?.stop(10_000);
        await server.drain(10_000);
        // Idle keep-alive connections too: left open, they would answer 503 to a client that reuses
        // them (one restarting Sesame in-process on the same port reached the stopped server).
        server.close();
        await scrapeListener?.close();
        await storage.close();
        if (!options.cryptoPool) await cryptoPool.close();
        await lock.release();
        // Last: the spans of the shutdown's commits are sent too.
        await restoreProcessWide();
      },
    };
  } catch (error) {
    if (sweeper) clearInterval(sweeper);
    followedOnPostgres?.stop();
    await logoutDeliveries?.stop();
    await mailer?.stop();
    keys?.stop();
    await acceptors?.stop(1000).catch(() => {});
    // Nothing may keep the port after a failed start (the routes would run on closed storage).
    await closeListeners();
    if (!options.cryptoPool) await pool?.close().catch(() => {});
    await storage.close().catch(() => {});
    await lock.release();
    await restoreProcessWide();
    throw error;
  }
}

/** A database URL for the log: without its password. */
function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.href;
  } catch {
    return 'postgres://…';
  }
}

/** The metrics port in use or its address not bindable: a setting to change, named. */
function metricsListenConfigError(error: unknown, config: Config): unknown {
  if (!(error instanceof ScrapeListenError)) return error;
  const port = `SESAME_METRICS_PORT (--metrics-port) = ${config.metricsPort}`;
  switch (error.code) {
    case 'EADDRINUSE':
      return new ConfigError(`${port}: port ${config.metricsPort} on ${config.metricsHost} is already in use; stop what holds it or choose another port`);
    case 'EACCES':
      return new ConfigError(`${port}: not allowed to listen on port ${config.metricsPort} (ports below 1024 need privileges)`);
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return new ConfigError(`SESAME_METRICS_HOST (--metrics-host) = ${JSON.stringify(config.metricsHost)}: not an address of this machine`);
    default:
      return new ConfigError(`${port}, SESAME_METRICS_HOST (--metrics-host) = ${JSON.stringify(config.metricsHost)}: ${error.message}`);
  }
}

/** A port in use or an address that cannot be bound is a setting to change: name it. */
function listenConfigError(error: unknown): unknown {
  if (!(error instanceof ListenError)) return error;
  const port = `SESAME_PORT (--port) = ${error.port}`;
  switch (error.code) {
    case 'EADDRINUSE':
      return new ConfigError(`${port}: port ${error.port} on ${error.host} is already in use (another Sesame or another program); stop it or choose another port`);
    case 'EACCES':
      return new ConfigError(`${port}: not allowed to listen on port ${error.port} (ports below 1024 need privileges)`);
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
      return new ConfigError(`SESAME_HOST (--host) = ${JSON.stringify(error.host)}: not an address of this machine`);
    default:
      return new ConfigError(`${port}, SESAME_HOST (--host) = ${JSON.stringify(error.host)}: ${error.message}`);
  }
}
