import { parentPort, workerData } from 'node:worker_threads';
import type { AcceptorData, FromAcceptor, ToAcceptor } from './protocol.js';
import { openStorage, type NodeStorage } from '../storage/db.js';
import { openFailureOf, openPostgresNode, postgresSettingsOf } from '../storage/postgres/node.js';
import { DIRECTORY_POLL_MS, FollowedOnPostgres } from './followed-on-postgres.js';
import { answeredFromCurrentCopies } from './current-copies.js';
import { openMasterKey } from '../directory.js';
import { SignatureCheck } from '../workers/signature-check.js';
import { ReplayGuardActor } from '../actors/replay-guard.js';
import { clockIn, installClock } from '../util/clock.js';
import { log, setLogLevel, setLogSink } from '../util/log.js';
import { startHttpServer, surfaceOf, type ForwardedRequest, type ForwardedResponse } from '../http/server.js';
import type { Request, Response, Route } from '../http/types.js';
import { NeedsOwner } from '../model/errors.js';
import type { AskMainThread } from './protocol.js';
import { errorOf } from './relayed-error.js';
import { buildLocalRoutes, type LocalRoutes } from './local-routes.js';
import { observeThread } from '../observability/thread-observability.js';
import { injectTraceContext, tracingOn } from '../observability/tracing.js';
import { errorResponse } from '../http/errors.js';
import { osThreadId } from '../util/os-thread-id.js';

/**
 * An HTTP acceptor thread: listens on the main thread's port beside it (the kernel spreads
 * connections over the threads) and serves every flow whose state the store decides, from its own
 * copy of the directory (see local-routes.ts; kept current from the directory's change feed): the
 * flows, the login pages, client registration, the management and admin APIs and the import, each
 * write decided in the store. It asks the main thread's password pool to hash and verify, and hands
 * a request to the main thread only while its copy is held back from a whole reload (and, with
 * SESAME_SIGNER=pool, what signs there).
 * See docs/architecture.md, "Threads".
 */
const data = workerData as AcceptorData;
const port = parentPort!;
const post = (message: FromAcceptor, transfer?: ArrayBuffer[]) => port.postMessage(message, transfer);

setLogLevel(data.config.logLevel);
setLogSink((line) => post({ type: 'log', line }));
installClock(clockIn(data.clockCell));

// On PostgreSQL this thread has its own pool and its copies following the change feed
// (FollowedOnPostgres); the main thread listens for the node, and this one reads what it heard. On LMDB it shares the environment.
const postgres = data.config.databaseUrl
  ? await openPostgresNode(postgresSettingsOf(data.config), data.sharedCounters, false).catch((error: unknown) => {
      throw new Error(`an HTTP thread cannot open the database: ${openFailureOf(error, data.config)}`);
    })
  : undefined;
const lmdb = postgres ? undefined : openStorage(data.config.dataDir, data.config.durability, data.sharedCounters);
const storage: NodeStorage = postgres ?? lmdb!;
/** On PostgreSQL: what keeps this thread's copies current (built with them, at the first load). */
let followed: FollowedOnPostgres | undefined;
const masterKey = await openMasterKey(storage, data.config);
const signatureCheck = new SignatureCheck();
const replayGuard = new ReplayGuardActor(storage.records);

/** Requests handed to the main thread and not yet answered. */
const pending = new Map<number, { resolve: (r: Response) => void; reject: (e: Error) => void }>();
let nextId = 1;
/** What was asked of the main thread (see MainThreadWork) and not yet answered. */
const asked = new Map<number, { resolve: (value: unknown) => void; reject: (e: Error) => void }>();

const askMainThread: AskMainThread = (part, method, args) =>
  new Promise((resolve, reject) => {
    const id = nextId++;
    asked.set(id, { resolve, reject });
    post({ type: 'ask', id, part, method, args });
  });

function forward(route: ForwardedRequest['route'], req: Request): Promise<Response> {
  const id = nextId++;
  // Moved, not cloned: a large body (an import) is the request's own buffer, a small one is
  // copied out of the pooled or shared buffer it may sit in.
  const own = req.body.byteLength >= 65536 && req.body.byteOffset === 0 && req.body.byteLength === req.body.buffer.byteLength;
  const body = own ? new Uint8Array(req.body.buffer) : new Uint8Array(req.body);
  // Traced: the main thread's span of the request continues this thread's trace (and only it).
  const headers = tracingOn() ? { ...req.headers } : (req.headers as Record<string, string>);
  injectTraceContext(headers);
  const request: ForwardedRequest = {
    route,
    method: req.method,
    path: req.path,
    query: req.query,
    params: [...req.params],
    headers,
    repeatedHeaders: [...req.repeatedHeaders],
    body,
    peer: req.peer,
  };
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    post({ type: 'forward', id, request, stale: lmdb !== undefined && builtFor !== lmdb.directoryVersion() }, [body.buffer as ArrayBuffer]);
  });
}

function asResponse(forwarded: ForwardedResponse): Response {
  const headers: Record<string, string> = {};
  for (const [name, value] of forwarded.headers) {
    // This thread's own server decides about keeping the connection.
    if (name.toLowerCase() === 'connection') continue;
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  const body = typeof forwarded.body === 'string' ? forwarded.body : Buffer.from(forwarded.body.buffer, forwarded.body.byteOffset, forwarded.body.byteLength);
  return { status: forwarded.status, headers, body };
}

let local: LocalRoutes;
/** The directory version (the shared counter) the copy is current with; -1 before the first load. */
let builtFor = -1;
/** The last entry of the directory's change feed taken into the copy (see DirectoryLog). */
let appliedThrough = 0;
/**
 * Changes taken record by record at most: more than this waiting (a large import committed since
 * the last request) and the copy is loaded again whole. Measured (bench/directory-reload.ts, 2
 * cores): ~9 µs per change taken, 125-203 ms for a whole load of 10,000 people (20,619 records).
 */
const MOST_CHANGES_TAKEN = 10_000;
/** When the last whole load ended, and how long it took (ms, performance.now()). */
let lastReload = { endedAt: -Infinity, took: 0 };
/** How often the copy was loaded whole (the first load included): for tests, which check the feed kept it current. */
let wholeLoads = 0;
/**
 * A whole load may take at most this share of the thread's time: while the directory changes
 * faster than that allows, requests meanwhile are forwarded to the main thread, whose copy takes
 * the changes record by record before each request, instead of loading again.
 */
const RELOAD_SHARE = 0.1;

/**
 * Before each request: reads see every commit, and the directory copy is current (the changes
 * committed since taken record by record, or the copy loaded again whole) or the request goes to
 * the main thread.
 */
function beforeRequest(): void {
  if (postgres) {
    // Loaded once; the follower keeps the copies current from then on (requests wait for it only
    // after a lost LISTEN connection: see the routes below).
    if (followed) return;
    local = buildLocalRoutes({ config: data.config, issuer: data.issuer, storage, masterKey, signatureCheck, replayGuard, askMainThread });
    followed = new FollowedOnPostgres(postgres.directory, postgres.reader, local.copy, postgres.changeFeed, postgres.loadedThrough(), postgres.position);
    followed.follow(DIRECTORY_POLL_MS);
    // Answered from current copies only, as on the main thread (handlers and the checks before an upload).
    local.served = new Map(answeredFromCurrentCopies([...local.served.values()], followed, local.ports).map((route) => [route.pattern, route]));
    wholeLoads++;
    return;
  }
  const shared = lmdb!;
  // The version first: a change is committed before its version moves, so fresh reads then include it.
  const version = shared.directoryVersion();
  shared.freshReads();
  if (version === builtFor) return;
  // How far behind is one read of the log's last key (numbers are dense but for aborted batches):
  // a copy too far behind does not read the entries only to find so, request after request.
  if (builtFor !== -1 && shared.directoryLog.last() - appliedThrough <= MOST_CHANGES_TAKEN) {
    const feed = shared.directoryLog.since(appliedThrough, MOST_CHANGES_TAKEN);
    if (feed && local.takeChanges(feed.changes)) {
      appliedThrough = feed.last;
      builtFor = version;
      return;
    }
  }
  const now = performance.now();
  if (builtFor !== -1 && now - lastReload.endedAt < lastReload.took / RELOAD_SHARE) throw new NeedsOwner('the directory (this thread is reloading its copy)');
  // Read before the load: what is logged after it is taken again (taking a change twice is harmless).
  const through = shared.directoryLog.last();
  local = buildLocalRoutes({ config: data.config, issuer: data.issuer, storage, masterKey, signatureCheck, replayGuard, askMainThread });
  builtFor = version;
  appliedThrough = through;
  wholeLoads++;
  const endedAt = performance.now();
  lastReload = { endedAt, took: endedAt - now };
}

/** Stops this thread's metrics and tracing (sending the spans not yet exported). */
let stopObserving: () => Promise<void> = async () => {};

/**
 * Waits for the main thread's word: `join` once it serves and is ready (true), `drain` when the
 * start failed meanwhile (false).
 */
function instructed(): Promise<boolean> {
  return new Promise((resolve) => {
    const listener = (message: ToAcceptor) => {
      if (message.type !== 'join' && message.type !== 'drain') return;
      port.off('message', listener);
      resolve(message.type === 'join');
    };
    port.on('message', listener);
  });
}

async function start(): Promise<void> {
  stopObserving = await observeThread(data.metrics, data.index, data.config.tracing);
  beforeRequest();
  if (!local) throw new Error('the directory copy did not load');
  // The port is joined only once the main thread is ready: a thread that served discovery while
  // /readyz (the main thread's) still said 503 would tell a load balancer two things at once.
  post({ type: 'prepared' });
  if (!(await instructed())) {
    await storage.close();
    await stopObserving();
    post({ type: 'drained' });
    port.close();
    return;
  }
  const indexOf = new Map(data.routes.map((descriptor, index) => [descriptor.pattern, index]));
  const server = await startHttpServer(data.config.host, data.port, {
    sharedPort: 'join',
    trustedProxies: data.config.trustedProxies,
    beforeRequest: () => beforeRequest(),
    // A route of the main thread's table by its index, an unknown path by its surface (the fallback's style).
    handOver: (route, req) => forward(indexOf.get(route.pattern) ?? surfaceOf(req.path), req),
  });
  // A failure while it was binding: the thread is ending, so it does not serve.
  if (failed) {
    server.close();
    return;
  }
  /**
   * The check before an upload (the import's caller, registration's settings and token), served
   * here or not, run on a current copy: a caller added or a setting changed a moment ago must not be
   * refused by a copy from before. A copy whose reload is held back by the throttle leaves the check
   * to the main thread (the request is handed over, and it runs it): no request may force a reload
   * out of turn, since reloads are what the throttle bounds. A request without any credentials
   * where they are always needed is refused by any copy: else an unauthenticated upload would be
   * read whole before the main thread refused it.
   */
  const checkBeforeBody =
    (descriptor: (typeof data.routes)[number]) =>
    (req: Request): void | Promise<void> => {
      let stale = false;
      try {
        beforeRequest();
      } catch (error) {
        if (!(error instanceof NeedsOwner)) throw error;
        if (req.headers.authorization !== undefined || !local.credentialsRequired.has(descriptor.pattern)) return;
        stale = true;
      }
      // Looked up now: a reload replaces the checks with ones over the new copy.
      const check = local.served.get(descriptor.pattern)?.beforeBody;
      // A held-back copy answers only the missing credentials, which do not depend on it; what
      // its settings say (registration on or off) is the main thread's to answer.
      const refused = (error: unknown): void => {
        if (stale && errorResponse(descriptor.errorStyle, error).status !== 401) return;
        throw error;
      };
      try {
        const outcome = check?.(req);
        // A check that reads the store (a token's revocation) answers later.
        if (outcome instanceof Promise) return outcome.catch(refused);
      } catch (error) {
        refused(error);
      }
    };
  const routes: Route[] = data.routes.map((descriptor, index) => {
    const servedHere = local.served.get(descriptor.pattern);
    if (servedHere) {
      // Handlers and origin checks are looked up per request: a reload of the directory copy replaces them.
      const current = () => local.served.get(descriptor.pattern)!;
      const methods: Route['methods'] = {};
      for (const method of Object.keys(servedHere.methods) as (keyof Route['methods'])[]) {
        methods[method] = (req) => current().methods[method]!(req);
      }
      const cors = typeof servedHere.cors === 'function' ? (origin: string) => (current().cors as (o: string) => boolean)(origin) : servedHere.cors;
      return { ...servedHere, methods, cors, ...(servedHere.beforeBody ? { beforeBody: checkBeforeBody(descriptor) } : {}) };
    }
    return {
      pattern: descriptor.pattern,
      errorStyle: descriptor.errorStyle,
      maxBody: descriptor.maxBody,
      ...(descriptor.peerAddress ? { peerAddress: true as const } : {}),
      methods: {},
      forward: (req) => forward(index, req),
    };
  });
  server.mount(routes);
  closeServer = () => server.close();

  port.on('message', (message: ToAcceptor) => {
    switch (message.type) {
      case 'reply':
      case 'failed': {
        const waiting = pending.get(message.id);
        if (!waiting) return;
        pending.delete(message.id);
        if (message.type === 'reply') waiting.resolve(asResponse(message.response));
        else waiting.reject(new Error(message.message));
        return;
      }
      case 'answer':
      case 'refused': {
        const waiting = asked.get(message.id);
        if (!waiting) return;
        asked.delete(message.id);
        if (message.type === 'answer') waiting.resolve(message.value);
        else waiting.reject(errorOf(message.error));
        return;
      }
      case 'served':
        post({ type: 'served', count: server.requestsServed(), wholeLoads });
        return;
      case 'drain':
        void server
          .drain(message.timeoutMs)
          .then(async () => {
            // Nothing may stay open: the thread then ends by itself (terminating a thread whose
            // uWS loop still has sockets aborts the whole process).
            server.close();
            for (const waiting of asked.values()) waiting.reject(new Error('the acceptor thread is stopping'));
            asked.clear();
            followed?.stop();
            await storage.close();
            await stopObserving();
          })
          .catch((error: unknown) => log.error('HTTP acceptor thread: closing failed', { thread: data.index, error: String(error) }))
          .finally(() => {
            post({ type: 'drained' });
            port.close();
          });
        return;
    }
  });
  post({ type: 'listening', osThreadId: osThreadId() });
}

/**
 * An error nothing caught ends this thread cleanly: its listening socket and connections are
 * closed first (the kernel then gives new connections to the other threads; a thread ended with
 * sockets open would abort the process). The main thread logs the end and goes on.
 */
let closeServer: (() => void) | undefined;
let failed = false;
process.on('uncaughtException', (error) => {
  log.error('HTTP acceptor thread failed; it stops, the other threads go on serving the port', { thread: data.index, error: String(error) });
  if (failed) return;
  failed = true;
  closeServer?.();
  followed?.stop();
  for (const waiting of [...pending.values(), ...asked.values()]) waiting.reject(new Error('the acceptor thread is stopping'));
  void storage
    .close()
    .catch(() => {})
    .then(() => stopObserving())
    .catch(() => {})
    .finally(() => port.close());
});

start().catch((error: unknown) => {
  log.error('HTTP acceptor thread failed to start', { thread: data.index, error: String(error) });
  post({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
});
