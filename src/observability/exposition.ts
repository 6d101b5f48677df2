import { Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import {
  BATCH_ITEMS,
  BATCH_KINDS,
  COMMIT_SECONDS,
  POSTGRES_POOL_STATS,
  GRANTS,
  INTROSPECTION_RESULTS,
  LOCKOUT_FACTORS,
  MAIL_RESULTS,
  LOOP_LAG_STATS,
  HEAP_STATS,
  METHODS,
  REQUEST_SECONDS,
  SIGN_IN_FAILURES,
  STATUSES,
  TOKEN_TYPES,
} from './labels.js';
import { CORE, batchHistogramAt, durationAt, requestAt, tokenCell } from './layout.js';
import { coreCells, requestCells, type MetricsMemory } from './metrics-memory.js';

/**
 * The Prometheus exposition (prom-client): at each scrape, every metric adds up the HTTP threads'
 * cells in shared memory (metrics-memory.ts), so it reads the same whichever thread counted. The
 * scrape is the only place that builds label strings; the hot path only adds numbers.
 */
interface MetricsSources {
  memory: MetricsMemory;
  /** The mounted route patterns, in mount order (the route labels). */
  routePatterns(): readonly string[];
  /** The LMDB environment's size figures (main thread). */
  lmdb(): { mapSize: number; usedBytes: number; readers: number };
  /** Tasks waiting for a thread in each worker pool (main thread). */
  poolQueues(): { crypto: number; password: number };
  /** Threads running in each worker pool (main thread). */
  poolThreads(): { crypto: number; password: number };
}

type Labels = Record<string, string | number>;
interface Sample {
  labels: Labels;
  value: number;
  metricName?: string;
}

/** What the scrape serves: the content type and the text. */
export interface Exposition {
  readonly contentType: string;
  text(): Promise<string>;
}

/**
 * The process metrics (CPU, memory, handles, GC, the main thread's event loop), set up once per
 * process: prom-client's collectors keep observers running that nothing stops.
 */
let processMetrics: Registry | undefined;

export function createExposition(sources: MetricsSources): Exposition {
  processMetrics ??= defaultRegistry();
  const registry = new Registry();
  const { memory } = sources;
  const cores = Array.from({ length: memory.threads }, (_, thread) => coreCells(memory, thread));
  /** The core cell at `at`, added up over the threads. */
  const core = (at: number) => {
    let sum = 0;
    for (const cells of cores) sum += cells[at]!;
    return sum;
  };

  /**
   * A metric computed at scrape time. prom-client's registry formats any object with a name, help,
   * type and get() (its own metric classes cannot take precomputed bucket counts).
   */
  const define = (name: string, help: string, type: 'counter' | 'gauge' | 'histogram', samples: () => Sample[]) => {
    const metric = { name, help, type, aggregator: 'sum', get: async () => ({ name, help, type, aggregator: 'sum', values: samples() }) };
    registry.registerMetric(metric as unknown as Metric);
  };
  const counterOver =
    <L extends string>(label: string, values: readonly L[], at: number) =>
    () =>
      values.map((value, i) => ({ labels: { [label]: value }, value: core(at + i) }));

  define('sesame_http_requests_total', 'HTTP requests answered, by route pattern (unmatched: no route), method and status (aborted: the client left first)', 'counter', () =>
    requestSamples(sources, (cells, at, labels, out) => {
      for (let s = 0; s < STATUSES.length; s++) if (cells(at + s) > 0) out.push({ labels: { ...labels, status: STATUSES[s]! }, value: cells(at + s) });
    }),
  );
  define('sesame_http_request_duration_seconds', "Time from a request's arrival on any HTTP thread to its answer, by route pattern and method", 'histogram', () =>
    requestSamples(sources, (cells, at, labels, out) => {
      const base = durationAt(at);
      let count = 0;
      for (let b = 0; b <= REQUEST_SECONDS.length; b++) count += cells(base + b);
      if (count > 0) out.push(...histogramSamples('sesame_http_request_duration_seconds', REQUEST_SECONDS, labels, (i) => cells(base + i)));
    }),
  );
  define('sesame_tokens_issued_total', 'Tokens issued, by grant (implicit: at the authorization endpoint) and kind of token', 'counter', () =>
    GRANTS.flatMap((grant, g) => TOKEN_TYPES.map((type, t) => ({ labels: { grant, type }, value: core(tokenCell(g, t)) }))),
  );
  define('sesame_introspections_total', 'Token introspections answered, by result', 'counter', counterOver('result', INTROSPECTION_RESULTS, CORE.introspections));
  define('sesame_sign_ins_total', 'Browser sign-ins completed (a user session opened by the login pages)', 'counter', () => [{ labels: {}, value: core(CORE.signIns) }]);
  define(
    'sesame_sign_in_failures_total',
    'Failed sign-in steps, by reason (password: wrong password or unknown login name; otp: wrong TOTP code; locked: the account is locked; idp: a sign-in at an identity provider that failed or was refused; webauthn: a passkey or security key whose answer was refused)',
    'counter',
    counterOver('reason', SIGN_IN_FAILURES, CORE.signInFailures),
  );
  define('sesame_lockouts_total', 'Accounts locked by the lockout policy, by the factor whose failures locked them', 'counter', counterOver('factor', LOCKOUT_FACTORS, CORE.lockouts));
  define(
    'sesame_mails_total',
    'Mails, by what happened: queued (by any thread or node), sent (the relay took it), failed_attempt (retried later), given_up (the retry window closed; listed at /admin/v1/mails/_search)',
    'counter',
    counterOver('result', MAIL_RESULTS, CORE.mails),
  );
  define('sesame_lmdb_commit_duration_seconds', 'Time from an LMDB write to its durability (commit, and sync to disk with SESAME_DURABILITY=flush), as a response waits for it', 'histogram', () =>
    histogramSamples('sesame_lmdb_commit_duration_seconds', COMMIT_SECONDS, {}, (i) => core(CORE.commit + i)),
  );
  define('sesame_postgres_statement_duration_seconds', 'Time from sending a PostgreSQL statement to its answer, over every HTTP thread (SESAME_DATABASE_URL)', 'histogram', () =>
    histogramSamples('sesame_postgres_statement_duration_seconds', COMMIT_SECONDS, {}, (i) => core(CORE.pgStatement + i)),
  );
  define('sesame_postgres_connection_wait_seconds', "Time a transaction waited for a connection from its thread's PostgreSQL pool", 'histogram', () =>
    histogramSamples('sesame_postgres_connection_wait_seconds', COMMIT_SECONDS, {}, (i) => core(CORE.pgConnectionWait + i)),
  );
  define('sesame_postgres_notification_lag_seconds', "Time from a change notification's sending (another node's or thread's commit) to its arrival here, by the wall clocks of both", 'histogram', () =>
    histogramSamples('sesame_postgres_notification_lag_seconds', COMMIT_SECONDS, {}, (i) => core(CORE.pgNotificationLag + i)),
  );
  define(
    'sesame_postgres_pool_connections',
    "Connections of the PostgreSQL pools of every HTTP thread, by state (total, idle, waiting: requests waiting for one), as of each thread's last statement",
    'gauge',
    () => POSTGRES_POOL_STATS.map((state, s) => ({ labels: { state }, value: core(CORE.pgPool + s) })),
  );
  define('sesame_lmdb_map_size_bytes', 'Size of the LMDB memory map (the most the database may grow to)', 'gauge', () => [{ labels: {}, value: sources.lmdb().mapSize }]);
  define('sesame_lmdb_used_bytes', 'Bytes of the LMDB map in use (pages up to the last one written)', 'gauge', () => [{ labels: {}, value: sources.lmdb().usedBytes }]);
  define('sesame_lmdb_readers', 'LMDB reader slots in use (threads and processes reading the environment)', 'gauge', () => [{ labels: {}, value: sources.lmdb().readers }]);
  define('sesame_worker_pool_queue_length', 'Tasks waiting for a worker thread, by pool (crypto: signing and signature checks; password: hashing and verification)', 'gauge', () => {
    const queues = sources.poolQueues();
    return [
      { labels: { pool: 'crypto' }, value: queues.crypto },
      { labels: { pool: 'password' }, value: queues.password },
    ];
  });
  define('sesame_worker_batch_size', 'Items per batch sent to the crypto worker pool, by kind (sign: JWT signatures; verify: assertion signature checks)', 'histogram', () =>
    BATCH_KINDS.flatMap((kind, k) => histogramSamples('sesame_worker_batch_size', BATCH_ITEMS, { kind }, (i) => core(batchHistogramAt(k) + i))),
  );
  define('sesame_worker_batch_pending', 'Items waiting for the next batch to the crypto worker pool, by kind', 'gauge', counterOver('kind', BATCH_KINDS, CORE.batchPending));
  define('sesame_thread_heap_bytes', 'V8 heap of each HTTP thread (0: the main thread), by figure (total: its size, used: its live part, external: buffers its objects own)', 'gauge', () =>
    cores.flatMap((cells, thread) => HEAP_STATS.map((stat, s) => ({ labels: { thread: String(thread), stat }, value: cells[CORE.heap + s]! }))),
  );
  define('sesame_worker_threads', 'Worker threads running in each pool (crypto: signing and signature checks; password: hashing and verification); threads start with the first task', 'gauge', () => {
    const threads = sources.poolThreads();
    return [
      { labels: { pool: 'crypto' }, value: threads.crypto },
      { labels: { pool: 'password' }, value: threads.password },
    ];
  });
  define('sesame_event_loop_lag_seconds', 'Event-loop delay of each HTTP thread (0: the main thread) over the last 5 s, by statistic', 'gauge', () =>
    cores.flatMap((cells, thread) => LOOP_LAG_STATS.map((stat, s) => ({ labels: { thread: String(thread), stat }, value: cells[CORE.loopLag + s]! }))),
  );

  const merged = Registry.merge([processMetrics, registry]);
  return { contentType: merged.contentType, text: () => merged.metrics() };
}

/** Samples of each route and method with requests, by `each` (cells reads the requests cells added up over the threads). */
function requestSamples(sources: MetricsSources, each: (cells: (at: number) => number, at: number, labels: Labels, out: Sample[]) => void): Sample[] {
  const { memory } = sources;
  const threads = Array.from({ length: memory.threads }, (_, thread) => requestCells(memory, thread));
  const cells = (at: number) => {
    let sum = 0;
    for (const thread of threads) sum += thread[at] ?? 0;
    return sum;
  };
  const patterns = sources.routePatterns();
  const out: Sample[] = [];
  for (let route = 0; route <= memory.routes; route++) {
    const label = route < memory.routes ? (patterns[route] ?? `route ${route}`) : 'unmatched';
    for (let m = 0; m < METHODS.length; m++) {
      each(cells, requestAt(route, m), { route: label, method: METHODS[m]! }, out);
    }
  }
  return out;
}

/** A histogram's samples in Prometheus form (cumulative buckets, +Inf, sum, count) from its cells. */
function histogramSamples(name: string, bounds: readonly number[], labels: Labels, cell: (i: number) => number): Sample[] {
  const out: Sample[] = [];
  let cumulative = 0;
  bounds.forEach((bound, i) => {
    cumulative += cell(i);
    out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: bound }, value: cumulative });
  });
  cumulative += cell(bounds.length);
  out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: cumulative });
  out.push({ metricName: `${name}_sum`, labels, value: cell(bounds.length + 1) });
  out.push({ metricName: `${name}_count`, labels, value: cumulative });
  return out;
}

function defaultRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}
