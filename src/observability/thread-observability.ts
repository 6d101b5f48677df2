import type { TracingConfig } from '../config.js';
import { publishLoopLag } from './loop-lag.js';
import { publishHeap } from './thread-heap.js';
import { coreCells, type MetricsMemory } from './metrics-memory.js';
import { installRecorder } from './recorder.js';

/**
 * Starts what one HTTP thread does for observability: counting into its slice of the metrics
 * memory and publishing its event-loop lag and heap size (metrics on), and its tracer (tracing configured; the
 * OpenTelemetry SDK is imported only then). Returns a function that stops all of it, sending the
 * spans not yet exported.
 */
export async function observeThread(memory: MetricsMemory | undefined, thread: number, tracing: TracingConfig | undefined): Promise<() => Promise<void>> {
  const stopRecorder = memory ? installRecorder(memory, thread) : undefined;
  const stopLoopLag = memory ? publishLoopLag(coreCells(memory, thread)) : undefined;
  const stopHeap = memory ? publishHeap(coreCells(memory, thread)) : undefined;
  let stopTracing: (() => Promise<void>) | undefined;
  try {
    stopTracing = tracing ? await (await import('./otel-sdk.js')).startTracing(tracing, thread) : undefined;
  } catch (error) {
    stopRecorder?.();
    stopLoopLag?.();
    stopHeap?.();
    throw error;
  }
  return async () => {
    stopRecorder?.();
    stopLoopLag?.();
    stopHeap?.();
    await stopTracing?.();
  };
}
