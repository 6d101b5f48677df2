import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { serverEnv, tempDataDir } from './helpers/server.js';
import { MAIN_THREAD_NODE_FLAGS } from '../src/util/thread-memory.js';

/**
 * `npm start` as a process manager runs it: the README's start command, signalled through npm's own
 * pid. npm forwards SIGTERM to its script's process; the script execs node, so the server itself gets
 * the signal, shuts down and frees its port, and npm exits with it (no orphaned server).
 * The global setup has just built dist/ (with its stamp), so the prestart build check compiles nothing.
 */
const root = fileURLToPath(new URL('..', import.meta.url));

function npmCommand(): [string, string[]] {
  const npm = process.env.npm_execpath;
  return npm?.endsWith('.js') ? [process.execPath, [npm]] : ['npm', []];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pids whose parent is pid (pgrep, Linux and macOS); undefined when pgrep is not there. */
function childrenOf(pid: number): number[] | undefined {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch (error) {
    const status = (error as { status?: number }).status;
    return status === 1 ? [] : undefined; // 1: no process matched
  }
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

async function healthy(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
    return res.ok;
  } catch {
    return false;
  }
}

describe('npm start', () => {
  const dataDir = tempDataDir();
  let npm: ChildProcess | undefined;
  let serverPids: number[] = [];

  afterAll(() => {
    // Only if an assertion failed: leave no server behind.
    for (const pid of serverPids) if (alive(pid)) process.kill(pid, 'SIGKILL');
    if (npm?.pid && alive(npm.pid)) npm.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves, and SIGTERM to the npm process stops the server and frees its port', async () => {
    const [command, args] = npmCommand();
    npm = spawn(command, [...args, 'start', '--silent'], {
      cwd: root,
      env: { ...serverEnv(dataDir), npm_config_update_notifier: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    npm.stdout!.on('data', (d) => (output += d));
    npm.stderr!.on('data', (d) => (output += d));
    const npmExit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => npm!.once('exit', (code, signal) => resolve({ code, signal })));

    let port = 0;
    await waitFor(
      'the server to log "sesame listening"',
      () => {
        const line = output.split('\n').find((l) => l.includes('"sesame listening"'));
        if (line) port = (JSON.parse(line) as { port: number }).port;
        if (npm!.exitCode !== null) throw new Error(`npm start exited with ${npm!.exitCode}:\n${output}`);
        return port > 0;
      },
      25_000,
    );
    const url = `http://127.0.0.1:${port}`;
    await waitFor('/healthz', () => healthy(url), 10_000);
    expect(output).not.toContain('compiling'); // dist/ was up to date: no build before the start

    const children = childrenOf(npm.pid!);
    if (children) {
      // Whatever runs under npm (and under that), for the clean-up should an assertion fail.
      serverPids = [...children, ...children.flatMap((pid) => childrenOf(pid) ?? [])];
      // The script's process is node itself (exec), not a shell in between that would die alone.
      expect(children).toHaveLength(1);
      const name = execFileSync('ps', ['-o', 'comm=', '-p', String(children[0])], { encoding: 'utf8' }).trim();
      expect(name).toBe('node');
      // With the main thread's memory flags (src/util/thread-memory.ts), as the test and bench servers start.
      const argv = readFileSync(`/proc/${children[0]}/cmdline`, 'utf8').split('\0');
      for (const flag of MAIN_THREAD_NODE_FLAGS) expect(argv).toContain(flag);
    }

    npm.kill('SIGTERM');
    const exit = await Promise.race([npmExit, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`npm did not exit:\n${output}`)), 15_000))]);
    expect(exit.code === 0 || exit.signal === 'SIGTERM', `npm exit ${JSON.stringify(exit)}`).toBe(true);
    for (const pid of serverPids) await waitFor(`server pid ${pid} to exit`, () => !alive(pid), 10_000);
    await waitFor('the port to be free', async () => !(await healthy(url)), 10_000);
    expect(output).toContain('"signal":"SIGTERM"');
    expect(output).toContain('"msg":"stopped"');
  });
});
