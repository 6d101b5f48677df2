import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { log } from './log.js';

/**
 * Gives memory back after a burst: V8 keeps its heap at the high-water mark of a load test until
 * something forces a full collection. When the server has been quiet for `quietMs` after serving
 * traffic, one full GC returns the freed pages to the OS. Costs nothing while requests flow.
 */
function exposeGc(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return undefined;
  }
}

export function startIdleTrim(requestsServed: () => number, quietMs = 10_000): { stop(): void } {
  const gc = exposeGc();
  if (!gc) return { stop() {} };
  let lastCount = requestsServed();
  let busySinceTrim = false;
  const timer = setInterval(() => {
    const count = requestsServed();
    if (count !== lastCount) {
      lastCount = count;
      busySinceTrim = true;
      return;
    }
    if (!busySinceTrim) return;
    busySinceTrim = false;
    const before = process.memoryUsage().rss;
    gc();
    log.debug('idle trim', { rssBefore: before, rssAfter: process.memoryUsage().rss });
  }, quietMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
