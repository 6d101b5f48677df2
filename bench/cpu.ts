import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * CPU time of a process (user + system, all its threads, from /proc/<pid>/stat), in microseconds;
 * undefined where /proc is not available. Sampled around a measured window, it gives the CPU a
 * server spent per request: a figure that stays steady when a shared machine's throughput swings,
 * and that projects to any core count.
 */
const TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

export function processCpuMicros(pid: number | undefined): number | undefined {
  return pid === undefined ? undefined : cpuMicrosOf(`/proc/${pid}/stat`);
}

/**
 * CPU time of a process's main thread alone (its task whose id is the pid): where a server
 * does what only one thread may do, this is the serial part of its work.
 */
export function mainThreadCpuMicros(pid: number | undefined): number | undefined {
  return threadCpuMicros(pid, pid);
}

/** CPU time of one thread (task `tid`) of a process. */
export function threadCpuMicros(pid: number | undefined, tid: number | undefined): number | undefined {
  return pid === undefined || tid === undefined ? undefined : cpuMicrosOf(`/proc/${pid}/task/${tid}/stat`);
}

function cpuMicrosOf(path: string): number | undefined {
  try {
    const stat = readFileSync(path, 'utf8');
    // Fields after the command name (which may hold spaces, so split after its closing parenthesis):
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? (ticks * 1e6) / TICKS_PER_SECOND : undefined;
  } catch {
    return undefined;
  }
}

export interface CpuWindow {
  /** Server CPU µs over the window (undefined without /proc or a pid). */
  server: number | undefined;
  /** The server's main thread's CPU µs over the window. */
  mainThread: number | undefined;
  /** CPU µs over the window of each of `threadIds` (undefined where one could not be read). */
  threads: (number | undefined)[];
  /** This process's CPU µs over the window: the load generator (autocannon runs here). */
  loadGenerator: number;
  /** Wall time of the window in µs. */
  wall: number;
}

/** Starts a measured window; `stop()` returns what the server, these threads of it, and the load generator spent in it. */
export function cpuWindow(pid: number | undefined, threadIds: readonly number[] = []): { stop(): CpuWindow } {
  const server = processCpuMicros(pid);
  const main = mainThreadCpuMicros(pid);
  const threadsBefore = threadIds.map((tid) => threadCpuMicros(pid, tid));
  const own = process.cpuUsage();
  const started = process.hrtime.bigint();
  return {
    stop() {
      const after = processCpuMicros(pid);
      const mainAfter = mainThreadCpuMicros(pid);
      const ownDelta = process.cpuUsage(own);
      return {
        server: server === undefined || after === undefined ? undefined : after - server,
        mainThread: main === undefined || mainAfter === undefined ? undefined : mainAfter - main,
        threads: threadIds.map((tid, i) => {
          const before = threadsBefore[i];
          const after = threadCpuMicros(pid, tid);
          return before === undefined || after === undefined ? undefined : after - before;
        }),
        loadGenerator: ownDelta.user + ownDelta.system,
        wall: Number(process.hrtime.bigint() - started) / 1000,
      };
    },
  };
}
