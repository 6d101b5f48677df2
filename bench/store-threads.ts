import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker, isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { tokenClaims } from './token-record.js';
import { open, type RootDatabase } from 'lmdb';

/**
 * Durable token writes from several threads at once, as Sesame's HTTP threads make them: where
 * issuance levels off, the serial µs per durable write (wall time ÷ writes, all threads together)
 * and how many writes share one commit. Two ways to commit:
 *
 * - `own`: each thread commits its own writes (lmdb-js batches an event-loop turn's writes into one
 *   transaction per thread; the threads take turns at LMDB's one writer, and with the overlapping
 *   sync one fsync covers every commit before it). What Sesame does.
 * - `one-writer`: every thread hands its records to one writer thread over a MessagePort, which
 *   commits all threads' writes of a turn in one transaction and answers each thread once it is
 *   synced: group commit across threads, bought with two messages per batch.
 *
 * Each thread keeps `--in-flight` writes outstanding (a busy HTTP thread's connections), each write
 * an opaque token's claims under its SHA-256, resolved once synced (`flush`, Sesame's default). The
 * last column is what one write waits (commit and sync): with W writes in flight in all, durable
 * issuance cannot pass W ÷ that wait, however many threads commit.
 *
 *   node dist-bench/bench/store-threads.js [--threads 1,2,4,8] [--seconds 3] [--in-flight 64] [--modes own,one-writer]
 */
interface Options {
  threads: number[];
  seconds: number;
  inFlight: number;
  modes: Mode[];
}
type Mode = 'own' | 'one-writer';

interface Job {
  path: string;
  mode: Mode;
  seconds: number;
  inFlight: number;
  writer?: MessagePort;
}

const now = Math.floor(Date.now() / 1000);
const claims = () => tokenClaims(now);
const tokenKey = () => createHash('sha256').update(randomBytes(32)).digest();

const openRoot = (path: string) => open({ path, maxDbs: 4, mapSize: 8 * 1024 ** 3, encoding: 'msgpack', noMemInit: true });

/** A writing thread: keeps `inFlight` durable writes outstanding until the time is up; posts its count. */
async function writingThread(job: Job): Promise<void> {
  let write: () => Promise<unknown>;
  let root: RootDatabase | undefined;
  if (job.mode === 'own') {
    root = openRoot(job.path);
    const tokens = root.openDB<unknown, Buffer>({ name: 'tokens', encoding: 'msgpack', keyEncoding: 'binary' });
    const opened = root;
    write = async () => {
      await tokens.put(tokenKey(), claims());
      await opened.flushed;
    };
  } else {
    // The records of one turn go to the writer as one message; each resolves with the writer's answer.
    const port = job.writer!;
    let next = 0;
    const waiting = new Map<number, () => void>();
    let batch: [number, Buffer, unknown][] = [];
    port.on('message', (done: number[]) => {
      for (const id of done) waiting.get(id)?.();
      for (const id of done) waiting.delete(id);
    });
    write = () =>
      new Promise<void>((resolve) => {
        const id = next++;
        waiting.set(id, resolve);
        if (batch.length === 0) queueMicrotask(() => (port.postMessage(batch), (batch = [])));
        batch.push([id, tokenKey(), claims()]);
      });
  }
  const until = performance.now() + job.seconds * 1000;
  let count = 0;
  const lane = async () => {
    while (performance.now() < until) {
      await write();
      count++;
    }
  };
  await Promise.all(Array.from({ length: job.inFlight }, lane));
  parentPort!.postMessage(count);
  await root?.close();
  job.writer?.close();
}

/** The one writer: commits every thread's batch of a turn together, answers each thread once synced. */
function serveAsWriter(root: RootDatabase, ports: MessagePort[]): void {
  const tokens = root.openDB<unknown, Buffer>({ name: 'tokens', encoding: 'msgpack', keyEncoding: 'binary' });
  for (const port of ports) {
    port.on('message', async (batch: [number, Uint8Array, unknown][]) => {
      let last: Promise<unknown> | undefined;
      for (const [, key, record] of batch) last = tokens.put(Buffer.from(key.buffer, key.byteOffset, key.byteLength), record);
      await last;
      await root.flushed;
      port.postMessage(batch.map(([id]) => id));
    });
  }
}

async function measure(threads: number, mode: Mode, options: Options): Promise<{ perSecond: number; serialMicros: number; perCommit: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'sesame-store-threads-'));
  const path = join(dir, 'store.lmdb');
  const root = openRoot(path);
  const tokens = root.openDB({ name: 'tokens', encoding: 'msgpack', keyEncoding: 'binary' });
  const channels = mode === 'one-writer' ? Array.from({ length: threads }, () => new MessageChannel()) : [];
  if (mode === 'one-writer')
    serveAsWriter(
      root,
      channels.map((channel) => channel.port1),
    );
  const txnBefore = root.getStats() as { lastTxnId: number };
  const started = performance.now();
  const counts = await Promise.all(
    Array.from({ length: threads }, (_, i) => {
      const writer = channels[i]?.port2;
      const job: Job = { path, mode, seconds: options.seconds, inFlight: options.inFlight, ...(writer ? { writer } : {}) };
      const worker = new Worker(fileURLToPath(import.meta.url), { workerData: job, transferList: writer ? [writer] : [] });
      return new Promise<number>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const commits = (root.getStats() as { lastTxnId: number }).lastTxnId - txnBefore.lastTxnId;
  const writes = counts.reduce((a, b) => a + b, 0);
  // Every write counted was answered as durable, so the store holds exactly that many records.
  const stored = tokens.getCount();
  for (const channel of channels) channel.port1.close();
  await root.close();
  rmSync(dir, { recursive: true, force: true });
  if (stored !== writes) throw new Error(`${mode}, ${threads} thread(s): ${writes} writes answered, ${stored} records stored`);
  return { perSecond: writes / elapsed, serialMicros: (elapsed * 1e6) / writes, perCommit: writes / Math.max(1, commits) };
}

function parse(argv: string[]): Options {
  const options: Options = { threads: [1, 2], seconds: 3, inFlight: 64, modes: ['own', 'one-writer'] };
  for (let i = 0; i < argv.length; i += 2) {
    const value = argv[i + 1] ?? '';
    if (argv[i] === '--threads') options.threads = value.split(',').map(Number);
    else if (argv[i] === '--seconds') options.seconds = Number(value);
    else if (argv[i] === '--in-flight') options.inFlight = Number(value);
    else if (argv[i] === '--modes') options.modes = value.split(',') as Mode[];
    else throw new Error(`unknown option ${argv[i]}`);
  }
  return options;
}

if (isMainThread) {
  const options = parse(process.argv.slice(2));
  console.log(`durable token writes (flush: committed and synced), ${options.inFlight} in flight per thread, ${options.seconds} s per point`);
  console.log('mode         threads   writes/s   µs per write (wall ÷ writes)   writes per commit   ms per write (in flight ÷ writes/s)');
  for (const mode of options.modes)
    for (const threads of options.threads) {
      const result = await measure(threads, mode, options);
      console.log(
        `${mode.padEnd(12)} ${String(threads).padStart(7)}   ${Math.round(result.perSecond).toLocaleString('en-US').padStart(8)}   ${result.serialMicros.toFixed(1).padStart(28)}   ${result.perCommit.toFixed(1).padStart(17)}   ${((threads * options.inFlight * 1000) / result.perSecond).toFixed(2).padStart(35)}`,
      );
    }
} else {
  await writingThread(workerData as Job);
}
