import { readFileSync } from 'node:fs';

/** Resident memory of a process in MiB, from /proc (Linux): total, anonymous, and file-backed. */
export interface Rss {
  total: number;
  /** Heap, stacks, buffers: what the process itself holds. */
  anon: number;
  /** Mapped file pages, here the LMDB memory map: page cache the kernel can reclaim. */
  file: number;
}

export function rssBreakdown(pid: number | undefined): Rss | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)\\s+kB`).exec(status)?.[1] ?? NaN) / 1024;
    const total = field('VmRSS');
    return Number.isNaN(total) ? undefined : { total, anon: field('RssAnon'), file: field('RssFile') };
  } catch {
    return undefined;
  }
}

/** Resident set size of a process in MiB; undefined where /proc is not available. */
export function rssMiB(pid: number | undefined): number | undefined {
  return rssBreakdown(pid)?.total;
}

/** Samples a process's RSS every `intervalMs` until stopped; returns the peak. */
export function sampleRss(pid: number | undefined, intervalMs = 250): { stop(): number | undefined } {
  let peak = rssMiB(pid);
  const timer = setInterval(() => {
    const now = rssMiB(pid);
    if (now !== undefined && (peak === undefined || now > peak)) peak = now;
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}
