import { monitorEventLoopDelay } from 'node:perf_hooks';
import { loopLagCell } from './layout.js';

/**
 * Measures this thread's event-loop delay and writes its mean, median, 99th percentile and maximum
 * (seconds) over each window into `cells` (the thread's core cells), so the main thread can show
 * every HTTP thread's lag, which no scrape on the main thread could measure for another thread.
 * Returns a function that stops it.
 */
const WINDOW_MS = 5000;

export function publishLoopLag(cells: Float64Array): () => void {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const publish = () => {
    // perf_hooks reports nanoseconds; a window without a sample (an idle thread just started) is 0.
    const seconds = (ns: number) => (Number.isFinite(ns) ? ns / 1e9 : 0);
    cells[loopLagCell('mean')] = seconds(delay.mean);
    cells[loopLagCell('p50')] = seconds(delay.percentile(50));
    cells[loopLagCell('p99')] = seconds(delay.percentile(99));
    cells[loopLagCell('max')] = seconds(delay.max);
    delay.reset();
  };
  const timer = setInterval(publish, WINDOW_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    delay.disable();
  };
}
