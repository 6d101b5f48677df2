import {
  BATCH_ITEMS,
  BATCH_KINDS,
  COMMIT_SECONDS,
  GRANTS,
  INTROSPECTION_RESULTS,
  LOCKOUT_FACTORS,
  MAIL_RESULTS,
  LOOP_LAG_STATS,
  HEAP_STATS,
  METHODS,
  POSTGRES_POOL_STATS,
  REQUEST_SECONDS,
  SIGN_IN_FAILURES,
  STATUSES,
  TOKEN_TYPES,
} from './labels.js';

/**
 * Where each number lives in an HTTP thread's cells (a Float64Array slice of shared memory, one
 * slice per thread, written only by its thread; see metrics-memory.ts). Two regions:
 * - core: counters and gauges of fixed size (tokens, introspections, sign-ins, LMDB, pool, loop lag);
 * - requests: per route of the route table (plus one for unmatched paths), per method, a counter
 *   per status and a duration histogram.
 *
 * A histogram is its buckets' counts (not cumulative; the last one past the largest bound) followed
 * by the sum of the observed values; the count is the buckets' total.
 */
export function histogramSize(bounds: readonly number[]): number {
  return bounds.length + 2;
}

let next = 0;
const take = (size: number) => {
  const at = next;
  next += size;
  return at;
};

export const CORE = {
  /** [grant][token type] */
  tokens: take(GRANTS.length * TOKEN_TYPES.length),
  introspections: take(INTROSPECTION_RESULTS.length),
  signIns: take(1),
  signInFailures: take(SIGN_IN_FAILURES.length),
  lockouts: take(LOCKOUT_FACTORS.length),
  mails: take(MAIL_RESULTS.length),
  commit: take(histogramSize(COMMIT_SECONDS)),
  /** [batch kind] histogram */
  batches: take(BATCH_KINDS.length * histogramSize(BATCH_ITEMS)),
  /** [batch kind] items waiting for the next batch (a gauge) */
  batchPending: take(BATCH_KINDS.length),
  /** [stat] seconds, over the last window (a gauge) */
  loopLag: take(LOOP_LAG_STATS.length),
  /** [stat] bytes of the thread's V8 heap (a gauge, see thread-heap.ts) */
  heap: take(HEAP_STATS.length),
  /** PostgreSQL (SESAME_DATABASE_URL): statement latency, waits for a pool connection, notification lag (histograms), the pool's figures (gauges) */
  pgStatement: take(histogramSize(COMMIT_SECONDS)),
  pgConnectionWait: take(histogramSize(COMMIT_SECONDS)),
  pgNotificationLag: take(histogramSize(COMMIT_SECONDS)),
  pgPool: take(POSTGRES_POOL_STATS.length),
} as const;
export const CORE_SIZE = next;

/** The cell of tokens of grant `g` and type `t` (their indexes in GRANTS and TOKEN_TYPES). */
export function tokenCell(g: number, t: number): number {
  return CORE.tokens + g * TOKEN_TYPES.length + t;
}

/** Where the batch-size histogram of batch kind `k` (its index in BATCH_KINDS) starts. */
export function batchHistogramAt(k: number): number {
  return CORE.batches + k * histogramSize(BATCH_ITEMS);
}

/** The cell of a loop lag statistic. */
export function loopLagCell(stat: (typeof LOOP_LAG_STATS)[number]): number {
  return CORE.loopLag + LOOP_LAG_STATS.indexOf(stat);
}

/** Cells of one method of one route: a counter per status, then the duration histogram. */
export const METHOD_STRIDE = STATUSES.length + histogramSize(REQUEST_SECONDS);
/** Cells of one route: every method's. */
export const ROUTE_STRIDE = METHODS.length * METHOD_STRIDE;

/** Where route `route`'s method slot `m` starts in the requests region (its status counters). */
export function requestAt(route: number, m: number): number {
  return route * ROUTE_STRIDE + m * METHOD_STRIDE;
}

/** Where the duration histogram of the method slot starting at `at` starts. */
export function durationAt(at: number): number {
  return at + STATUSES.length;
}

/** Cells of the requests region for `routes` mounted routes (and the unmatched one after them). */
export function requestsSize(routes: number): number {
  return (routes + 1) * ROUTE_STRIDE;
}

/** Adds `value` to the histogram at `at` in `cells`. */
export function observe(cells: Float64Array, at: number, bounds: readonly number[], value: number): void {
  let bucket = 0;
  while (bucket < bounds.length && value > bounds[bucket]!) bucket++;
  cells[at + bucket]!++;
  cells[at + bounds.length + 1]! += value;
}
