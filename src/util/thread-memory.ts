/**
 * The young generation (new space) each worker thread's V8 heap may grow to, in MB. V8's default
 * lets a busy isolate's new space grow to 32 MB, and every isolate (HTTP acceptor threads, crypto and
 * password workers) keeps what it grew to: with `--max-semi-space-size=2` on every isolate, peak RSS
 * under `--http-threads 2` fell from 215-226 MB to 154-192 MB (code-flow, refresh; 2 cores) with no
 * measurable CPU cost. Requests allocate little that outlives them, so small scavenges stay cheap.
 */
export const WORKER_YOUNG_GENERATION_MB = 8;
