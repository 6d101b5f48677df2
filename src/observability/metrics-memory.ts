import { CORE_SIZE, requestsSize } from './layout.js';

/**
 * The shared memory every HTTP thread counts into: one slice per thread (the main thread's is 0,
 * acceptor n's is n), each written by its own thread only, so the hot path needs no atomics and no
 * message; the main thread adds the slices up when scraped. Structured-clone safe (the buffers are
 * shared, not copied, when handed to an acceptor thread).
 *
 * The requests region is sized by the route table, known only once the routes are built; the core
 * region exists from the start, so the commits of start-up count too.
 */
export interface MetricsMemory {
  threads: number;
  core: SharedArrayBuffer;
  /** Mounted routes (the unmatched paths' cells come after theirs). */
  routes: number;
  requests: SharedArrayBuffer | undefined;
}

const CELL = Float64Array.BYTES_PER_ELEMENT;

export function createMetricsMemory(threads: number): MetricsMemory {
  return { threads, core: new SharedArrayBuffer(threads * CORE_SIZE * CELL), routes: 0, requests: undefined };
}

/** Adds the requests region once the route table is known (before any thread serves a route). */
export function allocateRequestsRegion(memory: MetricsMemory, routes: number): void {
  memory.routes = routes;
  memory.requests = new SharedArrayBuffer(memory.threads * requestsSize(routes) * CELL);
}

/** Thread `thread`'s core cells. */
export function coreCells(memory: MetricsMemory, thread: number): Float64Array {
  return new Float64Array(memory.core, thread * CORE_SIZE * CELL, CORE_SIZE);
}

/** Thread `thread`'s requests cells (empty before the region exists). */
export function requestCells(memory: MetricsMemory, thread: number): Float64Array {
  if (!memory.requests) return new Float64Array(0);
  const size = requestsSize(memory.routes);
  return new Float64Array(memory.requests, thread * size * CELL, size);
}
