import autocannon from 'autocannon';
import { Worker } from 'node:worker_threads';
import type { BenchOptions } from './args.js';
import type { RequestPlan } from './scenarios/scenario.js';
import type { PreparedTarget } from './targets/target.js';

/** What one load thread sends with. */
export type LoadOptions = Pick<BenchOptions, 'duration' | 'connections' | 'pipelining' | 'rate'>;

/** What a load run measured, over every load thread. */
export interface LoadResult {
  /** Requests answered. */
  total: number;
  /** Requests per second: autocannon's average of whole seconds (one load thread), or every answer over the window (several). */
  average: number;
  p50: number;
  p99: number;
  p999: number;
  non2xx: number;
  errors: number;
  /** Epoch ms. */
  start: number;
  finish: number;
}

/** What a load thread is handed (structured-clone safe: a KeyObject crosses threads). */
export interface ShardData {
  scenario: string;
  /** Where this thread sends (one node of several, or the target's issuer). */
  origin: string;
  target: PreparedTarget;
  options: LoadOptions;
}

/** A load thread's answer: autocannon's raw result there (histograms encoded), merged here. */
export type ShardMessage = { type: 'ready' } | { type: 'done'; raw: RawResult } | { type: 'skip'; reason: string } | { type: 'failed'; message: string };

/** What autocannon answers on a worker thread: not aggregated (see autocannon.aggregateResult). */
export interface RawResult {
  totalCompletedRequests: number;
  start: Date;
  finish: Date;
}

/** Runs one plan with autocannon on a load thread: its raw result, for the bench's thread to merge. */
export async function runAutocannonRaw(origin: string, plan: RequestPlan, options: LoadOptions): Promise<RawResult> {
  return (await autocannon(autocannonOptions(origin, plan, options))) as unknown as RawResult;
}

function autocannonOptions(origin: string, plan: RequestPlan, options: LoadOptions): autocannon.Options {
  return {
    url: origin,
    connections: options.connections,
    // A plan of a fixed number of requests (each revoking its own live token) ends when they are done.
    ...(plan.amount ? { amount: plan.amount } : { duration: options.duration }),
    pipelining: options.pipelining,
    ...(options.rate ? { overallRate: options.rate } : {}),
    requests: plan.requests as autocannon.Request[],
  };
}

/** Runs one plan with autocannon on this thread. */
export async function runAutocannon(origin: string, plan: RequestPlan, options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon(autocannonOptions(origin, plan, options));
  return {
    total: result.requests.total,
    average: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    p999: result.latency.p99_9,
    non2xx: result.non2xx,
    errors: result.errors,
    start: result.start.getTime(),
    finish: result.finish.getTime(),
  };
}

/** `total` split into `parts` whole shares as even as can be (the first ones one larger). */
export function shares(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0));
}

/**
 * Several load threads' raw results as one: autocannon merges their latency histograms (exact
 * percentiles over every request); the rate is every answered request over the time from the
 * first thread's start to the last one's end.
 */
export function mergeLoad(origin: string, raws: readonly RawResult[], options: Pick<BenchOptions, 'connections' | 'duration'>): LoadResult {
  // autocannon exports aggregateResult (its own worker mode uses it); its type declarations lack it.
  const aggregate = (autocannon as unknown as { aggregateResult(results: readonly RawResult[], opts: autocannon.Options): autocannon.Result }).aggregateResult;
  const merged = aggregate(raws, { url: origin, connections: options.connections, duration: options.duration });
  const total = raws.reduce((n, r) => n + r.totalCompletedRequests, 0);
  const start = Math.min(...raws.map((r) => r.start.getTime()));
  const finish = Math.max(...raws.map((r) => r.finish.getTime()));
  return {
    total,
    average: total / ((finish - start) / 1000),
    p50: merged.latency.p50,
    p99: merged.latency.p99,
    p999: merged.latency.p99_9,
    non2xx: merged.non2xx,
    errors: merged.errors,
    start,
    finish,
  };
}

/** The number of load threads a run uses: never more than its connections or its requests a second. */
export function loadThreadCount(options: Pick<BenchOptions, 'loadThreads' | 'connections' | 'rate'>, nodes = 1): number {
  // Every thread gets at least one connection and, with --rate, at least one request a second (a
  // share of 0 would mean no limit to autocannon); several nodes get a thread each at least.
  return Math.min(Math.max(options.loadThreads, nodes), options.connections, options.rate ?? Number.POSITIVE_INFINITY);
}

/**
 * Sends a scenario's load: from this thread (one load thread; `plan` prepared here), or from
 * several worker threads, each preparing its own plan against the target (its own pre-issued
 * tokens); once all are prepared, `started` is called (the measured window opens) and they start
 * together, each with its share of the connections and of the rate. A thread that cannot prepare
 * or fails skips the scenario (the other threads are stopped).
 */
export async function sendLoad(scenario: string, target: PreparedTarget, plan: RequestPlan | undefined, options: BenchOptions, started: () => void): Promise<LoadResult | { skip: string }> {
  const origin = new URL(target.issuer).origin;
  const origins = target.origins ?? [origin];
  const threads = loadThreadCount(options, origins.length);
  if (threads <= 1) {
    if (!plan) throw new Error('one load thread sends a plan prepared on the bench thread');
    started();
    return runAutocannon(origin, plan, options);
  }
  const connections = shares(options.connections, threads);
  const rates = options.rate === undefined ? undefined : shares(options.rate, threads);
  const shards = connections.map((share, i) => {
    const data: ShardData = { scenario, origin: origins[i % origins.length]!, target, options: { duration: options.duration, connections: share, pipelining: options.pipelining, rate: rates?.[i] } };
    const worker = new Worker(new URL('./load-shard.js', import.meta.url), { workerData: data });
    // Its answers in order: ready (or skip, failed), then done (or failed).
    const answers: ShardMessage[] = [];
    const waiting: ((message: ShardMessage) => void)[] = [];
    const deliver = (message: ShardMessage) => {
      const next = waiting.shift();
      if (next) next(message);
      else answers.push(message);
    };
    worker.on('message', deliver);
    worker.once('error', (error) => deliver({ type: 'failed', message: error.message }));
    worker.once('exit', (code) => deliver({ type: 'failed', message: `load thread exited with ${code}` }));
    const next = () => new Promise<ShardMessage>((resolve) => (answers.length > 0 ? resolve(answers.shift()!) : waiting.push(resolve)));
    return { worker, next };
  });
  const stopAll = () => Promise.all(shards.map(({ worker }) => worker.terminate()));
  const notDone = (message: ShardMessage): string | undefined => (message.type === 'skip' ? message.reason : message.type === 'failed' ? `a load thread failed: ${message.message}` : undefined);
  for (const ready of await Promise.all(shards.map(({ next }) => next()))) {
    const reason = ready.type === 'ready' ? undefined : (notDone(ready) ?? `a load thread answered ${ready.type} before it was ready`);
    if (reason) {
      await stopAll();
      return { skip: reason };
    }
  }
  started();
  for (const { worker } of shards) worker.postMessage('go');
  const done = await Promise.all(shards.map(({ next }) => next()));
  await stopAll();
  const raws: RawResult[] = [];
  for (const message of done) {
    if (message.type !== 'done') return { skip: notDone(message) ?? `a load thread answered ${message.type}` };
    raws.push(message.raw);
  }
  return mergeLoad(origin, raws, options);
}
