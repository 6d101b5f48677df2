import { rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { api } from './helpers/api.js';
import { startInProcess, type InProcessServer } from './helpers/in-process.js';
import { startServer, tempDataDir, type StartOptions } from './helpers/server.js';

/**
 * One Sesame per port and per data dir. A second one used to start silently: uWS shared the port
 * (requests split between the two) and each process kept its own memory of one LMDB store
 * (duplicate user names, users missing on one of them). Now it exits with 2 naming the setting.
 * The refused second servers are processes (their exit code is the point); the servers they meet
 * run in this process, holding the port and the data dir as a process does.
 */
const servers: InProcessServer[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const server of servers) await server.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Expects the start to fail; a server that starts anyway is stopped, not leaked. */
async function refused(options: StartOptions, message: RegExp): Promise<void> {
  const started = await startServer(options).then(
    (server) => server,
    (error: Error) => error,
  );
  if (!(started instanceof Error)) {
    await started.close({ keepData: true });
    throw new Error('a second server started');
  }
  expect(started.message).toMatch(message);
}

async function first(): Promise<InProcessServer> {
  const server = await startInProcess();
  servers.push(server);
  return server;
}

describe('single instance', () => {
  it('refuses a second server on a port in use, with exit code 2 naming SESAME_PORT', async () => {
    const running = await first();
    await refused({ env: { SESAME_PORT: String(running.port) } }, /exited with 2[\s\S]*SESAME_PORT \(--port\) = \d+: port \d+ on 127\.0\.0\.1 is already in use/);
    // The first still answers every request (none went to a second process).
    for (let i = 0; i < 10; i++) expect((await api(running, 'GET', '/readyz')).status).toBe(200);
  });

  it('refuses a port another program listens on', async () => {
    const other = createServer();
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const port = (other.address() as { port: number }).port;
      await refused({ args: ['--port', String(port)] }, /exited with 2[\s\S]*SESAME_PORT \(--port\)[\s\S]*already in use/);
    } finally {
      other.close();
    }
  });

  it('refuses a second server on a data dir in use, also when reached through a symlink, with exit code 2 naming SESAME_DATA_DIR', async () => {
    const running = await first();
    await refused({ dataDir: running.dataDir }, /exited with 2[\s\S]*SESAME_DATA_DIR \(--data-dir\)[\s\S]*in use by another Sesame process/);
    const link = join(tmpdir(), `sesame-link-${process.pid}-${Date.now()}`);
    symlinkSync(running.dataDir, link);
    dirs.push(link);
    await refused({ dataDir: link }, /exited with 2[\s\S]*SESAME_DATA_DIR/);
    // The refused starts changed nothing: the first server's users are all there, once.
    const created = await api(running, 'POST', '/management/v1/users/machine', { token: running.pat, body: { userName: 'only-once', name: 'x' } });
    expect(created.status).toBe(200);
    const again = await api(running, 'POST', '/management/v1/users/machine', { token: running.pat, body: { userName: 'only-once', name: 'x' } });
    expect(again.status).toBe(409);
  });

  it('starts on the data dir of a server killed with SIGKILL (the lock does not outlive its process)', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const killed = await startServer({ dataDir });
    const user = await api(killed, 'POST', '/management/v1/users/machine', { token: killed.pat, body: { userName: 'survivor', name: 'x' } });
    expect(user.status).toBe(200);
    expect(await killed.stop('SIGKILL')).toBeNull();
    const next = await startInProcess({ dataDir });
    servers.push(next);
    expect((await api(next, 'GET', `/management/v1/users/${user.body.userId}`, { token: next.pat })).status).toBe(200);
  });
});
