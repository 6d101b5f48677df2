import {
  ABORTED_STATUS_SLOT,
  BATCH_ITEMS,
  BATCH_KINDS,
  COMMIT_SECONDS,
  GRANTS,
  INTROSPECTION_RESULTS,
  LOCKOUT_FACTORS,
  MAIL_RESULTS,
  REQUEST_SECONDS,
  SIGN_IN_FAILURES,
  TOKEN_TYPES,
  methodSlot,
  statusSlot,
  type BatchKind,
  type GrantLabel,
  type LockoutFactor,
  type MailResult,
  type SignInFailure,
  type TokenTypeLabel,
} from './labels.js';
import { CORE, batchHistogramAt, durationAt, observe, requestAt, tokenCell } from './layout.js';
import { allocateRequestsRegion, coreCells, requestCells, type MetricsMemory } from './metrics-memory.js';

/**
 * What the code counts, on the thread it runs on: each call adds to this thread's cells of the
 * shared metrics memory (a few array writes, no allocation, no lock). With metrics off nothing is
 * installed and every call returns at its first comparison.
 *
 * Like the clock and the log, it is per thread and installed by the composition root (the main
 * thread's app, each acceptor thread); an in-process test server installs it for the process while
 * it runs.
 */
let core: Float64Array | undefined;
let requests: Float64Array | undefined;

/** Installed recorders, the newest last (two in-process servers stopped in either order, as the clock). */
const installed: { memory: MetricsMemory; thread: number }[] = [];

function useNewest(): void {
  const newest = installed.at(-1);
  core = newest ? coreCells(newest.memory, newest.thread) : undefined;
  requests = newest?.memory.requests ? requestCells(newest.memory, newest.thread) : undefined;
}

/**
 * Counts into `thread`'s slice of `memory` from now on (requests too, once the memory has its
 * requests region: see addRequestsRegion); returns a function that stops it.
 */
export function installRecorder(memory: MetricsMemory, thread: number): () => void {
  const entry = { memory, thread };
  installed.push(entry);
  useNewest();
  let uninstalled = false;
  return () => {
    if (uninstalled) return;
    uninstalled = true;
    installed.splice(installed.lastIndexOf(entry), 1);
    useNewest();
  };
}

/** Gives `memory` its requests region for `routes` mounted routes: requests count from now on. */
export function addRequestsRegion(memory: MetricsMemory, routes: number): void {
  allocateRequestsRegion(memory, routes);
  useNewest();
}

/** Whether anything is counted (metrics on): callers skip working out what to count otherwise. */
export function counting(): boolean {
  return core !== undefined;
}

/** Whether requests are counted: the server then times each one. */
export function countingRequests(): boolean {
  return requests !== undefined;
}

/**
 * One answered request: `route` is its index in the mounted route table (the route count for an
 * unmatched path), `startedAt` the performance.now() of its arrival.
 */
export function recordRequest(route: number, method: string, status: number, startedAt: number): void {
  countRequest(route, method, statusSlot(status), startedAt);
}

/** A request whose client went away before it was answered. */
export function recordAbortedRequest(route: number, method: string, startedAt: number): void {
  countRequest(route, method, ABORTED_STATUS_SLOT, startedAt);
}

function countRequest(route: number, method: string, status: number, startedAt: number): void {
  const cells = requests;
  if (cells === undefined) return;
  const at = requestAt(route, methodSlot(method));
  cells[at + status]! += 1;
  observe(cells, durationAt(at), REQUEST_SECONDS, (performance.now() - startedAt) / 1000);
}

export function recordTokenIssued(grant: GrantLabel, type: TokenTypeLabel): void {
  if (core === undefined) return;
  core[tokenCell(GRANTS.indexOf(grant), TOKEN_TYPES.indexOf(type))]! += 1;
}

export function recordIntrospection(active: boolean): void {
  if (core === undefined) return;
  core[CORE.introspections + INTROSPECTION_RESULTS.indexOf(active ? 'active' : 'inactive')]! += 1;
}

export function recordSignIn(): void {
  if (core === undefined) return;
  core[CORE.signIns]! += 1;
}

export function recordSignInFailure(reason: SignInFailure): void {
  if (core === undefined) return;
  core[CORE.signInFailures + SIGN_IN_FAILURES.indexOf(reason)]! += 1;
}

export function recordMail(result: MailResult): void {
  if (core === undefined) return;
  core[CORE.mails + MAIL_RESULTS.indexOf(result)]! += 1;
}

export function recordLockout(factor: LockoutFactor): void {
  if (core === undefined) return;
  core[CORE.lockouts + LOCKOUT_FACTORS.indexOf(factor)]! += 1;
}

/** performance.now() when metrics are on (0 when off), for recordCommit. */
export function commitStarted(): number {
  return core === undefined ? 0 : performance.now();
}

/** A durable LMDB write that began at `startedAt` (commitStarted()). */
export function recordCommit(startedAt: number): void {
  if (core === undefined) return;
  observe(core, CORE.commit, COMMIT_SECONDS, (performance.now() - startedAt) / 1000);
}

/** One PostgreSQL statement answered after `seconds` (sent to answered), with its pool's figures then. */
export function recordStatement(seconds: number, pool: { total: number; idle: number; waiting: number }): void {
  if (core === undefined) return;
  observe(core, CORE.pgStatement, COMMIT_SECONDS, seconds);
  core[CORE.pgPool] = pool.total;
  core[CORE.pgPool + 1] = pool.idle;
  core[CORE.pgPool + 2] = pool.waiting;
}

/** A wait for a PostgreSQL pool connection (a transaction's) that lasted `seconds`. */
export function recordConnectionWait(seconds: number): void {
  if (core === undefined) return;
  observe(core, CORE.pgConnectionWait, COMMIT_SECONDS, seconds);
}

/** A change notification heard `seconds` after another node (or thread) sent it (by the wall clocks of both). */
export function recordNotificationLag(seconds: number): void {
  if (core === undefined) return;
  observe(core, CORE.pgNotificationLag, COMMIT_SECONDS, Math.max(0, seconds));
}

/** A batch of `items` sent to the worker pool. */
export function recordBatch(kind: BatchKind, items: number): void {
  if (core === undefined) return;
  observe(core, batchHistogramAt(BATCH_KINDS.indexOf(kind)), BATCH_ITEMS, items);
}

/** Items waiting for a batch: +1 when one is queued, minus a batch's size when it leaves. */
export function recordBatchPending(kind: BatchKind, change: number): void {
  if (core === undefined) return;
  core[CORE.batchPending + BATCH_KINDS.indexOf(kind)]! += change;
}

/** The main figures since the start, summed over every HTTP thread (the console's overview); undefined with metrics off. */
export interface MetricsGlance {
  tokensIssued: number;
  introspections: number;
  signIns: number;
  signInFailures: number;
  lockouts: number;
  /** Mails the SMTP relay took. */
  mails: number;
}

export function metricsGlance(): MetricsGlance | undefined {
  const newest = installed.at(-1);
  if (!newest) return undefined;
  const { memory } = newest;
  const threads = Array.from({ length: memory.threads }, (_, thread) => coreCells(memory, thread));
  const sum = (at: number, size: number) => {
    let total = 0;
    for (const cells of threads) for (let i = 0; i < size; i++) total += cells[at + i]!;
    return total;
  };
  return {
    tokensIssued: sum(CORE.tokens, GRANTS.length * TOKEN_TYPES.length),
    introspections: sum(CORE.introspections, INTROSPECTION_RESULTS.length),
    signIns: sum(CORE.signIns, 1),
    signInFailures: sum(CORE.signInFailures, SIGN_IN_FAILURES.length),
    lockouts: sum(CORE.lockouts, LOCKOUT_FACTORS.length),
    mails: sum(CORE.mails + MAIL_RESULTS.indexOf('sent'), 1),
  };
}
