import type { Rss } from './rss.js';

/**
 * What each kind of thread holds, at the end of a scenario (Sesame with metrics on): the process's
 * RSS is one figure for all its threads, but each HTTP thread publishes its own V8 heap
 * (`sesame_thread_heap_bytes`) and the pools say how many worker threads run
 * (`sesame_worker_threads`); the rest of the anonymous memory is the worker threads' heaps and
 * native memory (uWS, LMDB, allocators).
 */
export interface ThreadMemory {
  /** V8 heap size of each HTTP thread in MiB, the main thread's first. */
  heapMiB: number[];
  /** Of it, the live part (what the last collection kept and what was allocated since). */
  usedMiB: number[];
  cryptoWorkers: number;
  passwordWorkers: number;
  /** The process's RSS at the same moment. */
  rss?: Rss;
}

/** Parses the two families from a Prometheus text exposition. Pure. */
export function parseThreadMemory(text: string): Omit<ThreadMemory, 'rss'> {
  const heapMiB: number[] = [];
  const usedMiB: number[] = [];
  const workers = { crypto: 0, password: 0 };
  for (const line of text.split('\n')) {
    const heap = /^sesame_thread_heap_bytes\{thread="(\d+)",stat="(total|used)"\} ([\d.e+]+)$/.exec(line);
    if (heap) (heap[2] === 'total' ? heapMiB : usedMiB)[Number(heap[1])] = Number(heap[3]) / 1024 ** 2;
    const pool = /^sesame_worker_threads\{pool="(crypto|password)"\} (\d+)$/.exec(line);
    if (pool) workers[pool[1] as 'crypto' | 'password'] = Number(pool[2]);
  }
  return { heapMiB: Array.from(heapMiB, (v) => v ?? 0), usedMiB: Array.from(heapMiB, (_, i) => usedMiB[i] ?? 0), cryptoWorkers: workers.crypto, passwordWorkers: workers.password };
}

/** Scrapes `metricsUrl`; undefined when it does not answer. */
export async function scrapeThreadMemory(metricsUrl: string): Promise<Omit<ThreadMemory, 'rss'> | undefined> {
  try {
    const res = await fetch(metricsUrl, { signal: AbortSignal.timeout(5000) });
    return res.ok ? parseThreadMemory(await res.text()) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Per scenario with thread memory: RSS (anonymous / file-backed), the main thread's heap and its
 * live part, the acceptor threads' heaps (each, on average, and their live part), the worker threads running, and what the anonymous memory holds
 * beyond the HTTP threads' heaps. Pure.
 */
export function formatThreadMemory(rows: readonly { scenario: string; target: string; memory?: ThreadMemory }[]): string {
  const header = `${'memory (MiB)'.padEnd(20)}  ${'target'.padEnd(14)}  ${'RSS'.padStart(5)}  ${'anon'.padStart(5)}  ${'file'.padStart(5)}  ${'main heap (live)'.padStart(16)}  ${'acceptor heaps (live)'.padStart(22)}  ${'crypto/password workers'.padStart(23)}  ${'anon beyond HTTP heaps'.padStart(22)}`;
  const lines = [header, '-'.repeat(header.length)];
  for (const { scenario, target, memory } of rows) {
    if (!memory) continue;
    const [main = 0, ...acceptors] = memory.heapMiB;
    const [mainUsed = 0, ...acceptorsUsed] = memory.usedMiB;
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const heaps = main + acceptors.reduce((a, b) => a + b, 0);
    const show = (v: number | undefined) => (v === undefined ? '-' : v.toFixed(0));
    lines.push(
      [
        scenario.padEnd(20),
        target.padEnd(14),
        show(memory.rss?.total).padStart(5),
        show(memory.rss?.anon).padStart(5),
        show(memory.rss?.file).padStart(5),
        `${show(main)} (${show(mainUsed)})`.padStart(16),
        (acceptors.length === 0 ? '-' : `${acceptors.length} × ${mean(acceptors).toFixed(0)} (${mean(acceptorsUsed).toFixed(0)})`).padStart(22),
        `${memory.cryptoWorkers}/${memory.passwordWorkers}`.padStart(23),
        show(memory.rss ? memory.rss.anon - heaps : undefined).padStart(22),
      ].join('  '),
    );
  }
  return lines.join('\n');
}
