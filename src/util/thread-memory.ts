/**
 * The young generation (new space) each worker thread's V8 heap may grow to, in MB. V8's default
 * lets a busy isolate's new space grow to 32 MB, and every isolate (HTTP acceptor threads, crypto and
 * password workers) keeps what it grew to: with `--max-semi-space-size=2` on every isolate, peak RSS
 * under `--http-threads 2` fell from 215-226 MB to 154-192 MB (code-flow, refresh; 2 cores) with no
 * measurable CPU cost. Requests allocate little that outlives them, so small scavenges stay cheap.
 */
export const WORKER_YOUNG_GENERATION_MB = 8;

/**
 * The main thread's young generation, which V8 sizes only from the command line (a flag set at run
 * time, v8.setFlagsFromString, leaves the heap as it was configured): `npm start`, the `sesame`
 * command's shebang, and the test and bench servers start node with these flags. Measured with the
 * whole bench at 2 HTTP threads (2 cores, `node dist-bench/bench/run.js --duration 3`): peak RSS
 * 300 MiB without, 224 MiB with, CPU per request unchanged within noise.
 */
export const MAIN_THREAD_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2'];
