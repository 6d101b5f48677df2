import { readlinkSync } from 'node:fs';

/**
 * This thread's operating-system thread id (Linux: `/proc/thread-self` links to
 * `<pid>/task/<tid>`), undefined elsewhere. Node gives threads no names of their own, so this is
 * how a profiler or the bench (bench/cpu.ts) finds which of a process's tasks are HTTP threads.
 */
export function osThreadId(): number | undefined {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}
