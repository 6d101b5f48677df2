import { spawn, type ChildProcess } from 'node:child_process';

/**
 * A bench target run as a child process (the ceiling, the peer): started with node, ready once it
 * prints a JSON line with `"ready":true` (that line is the result), stopped with SIGTERM.
 */
export async function startReadyChild<T>(label: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; ready: T }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let output = '';
  const ready = await new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // the factory never learns of a child that did not start: stop it here
      reject(new Error(`${label} did not start:\n${output}`));
    }, 20_000);
    const collect = (d: Buffer) => (output += d);
    child.stderr!.on('data', collect);
    const onStdout = (d: Buffer) => {
      output += d;
      const line = output.split('\n').find((l) => l.includes('"ready":true'));
      if (!line) return;
      clearTimeout(timer);
      // Ready: what the child prints from now on is not kept (a run lasts minutes).
      child.stdout!.off('data', onStdout);
      child.stderr!.off('data', collect);
      child.stdout!.resume();
      child.stderr!.resume();
      resolve(JSON.parse(line) as T);
    };
    child.stdout!.on('data', onStdout);
    child.once('exit', (code) => reject(new Error(`${label} exited with ${code}:\n${output}`)));
  });
  return { child, ready };
}

/** Stops a child started by startReadyChild, resolving once it has exited. */
export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
