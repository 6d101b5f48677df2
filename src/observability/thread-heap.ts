import { CORE } from './layout.js';
import { HEAP_STATS } from './labels.js';

/**
 * Publishes this thread's V8 heap figures (bytes; see HEAP_STATS) into `cells` (the thread's core
 * cells) once a second: the process's RSS is one number for every thread, but each isolate knows
 * its own heap, so the scrape (and the bench) can tell what each kind of thread holds. Returns a
 * function that stops it.
 */
const INTERVAL_MS = 1000;

export function publishHeap(cells: Float64Array): () => void {
  const publish = () => {
    const { heapTotal, heapUsed, external } = process.memoryUsage();
    const values: Record<(typeof HEAP_STATS)[number], number> = { total: heapTotal, used: heapUsed, external };
    HEAP_STATS.forEach((stat, s) => {
      cells[CORE.heap + s] = values[stat];
    });
  };
  publish();
  const timer = setInterval(publish, INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
