import { statSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Server } from 'node:net';
import { join } from 'node:path';

/**
 * One Sesame process per data dir: each keeps state in memory next to LMDB, so two on one dir
 * diverge (duplicate user names, users one of them cannot see).
 *
 * The lock is a listening unix socket, held for the life of the process. The kernel closes it
 * when the process ends, however it ends (SIGKILL, OOM, crash), so a stale lock cannot outlive its
 * owner and no pid (which the OS may reuse) has to be trusted.
 * - Linux: an abstract socket named after the data dir's device and inode (the same dir reached
 *   through a symlink or another path is the same lock). Binding is atomic and leaves no file.
 * - Elsewhere (macOS): a socket file `sesame.lock` in the data dir. One left by a killed process
 *   refuses connections: it is then stale and replaced. Two starts racing over a stale file could
 *   both replace it; on Linux that cannot happen.
 */
export class DataDirInUseError extends Error {}

export interface DataDirLock {
  release(): Promise<void>;
}

export type LockKind = 'abstract' | 'file';

/** Locks an existing data dir (prepareDataDir creates and checks it first). */
export async function lockDataDir(dataDir: string, kind: LockKind = process.platform === 'linux' ? 'abstract' : 'file'): Promise<DataDirLock> {
  const inUse = () => new DataDirInUseError(`data dir ${dataDir} is in use by another Sesame process`);
  let server: Server;
  if (kind === 'abstract') {
    const { dev, ino } = statSync(dataDir);
    const name = `\0sesame-data-dir-${dev}-${ino}`;
    try {
      server = await listen(name);
    } catch (error) {
      if (code(error) === 'EADDRINUSE') throw inUse();
      throw error;
    }
  } else {
    const path = join(dataDir, 'sesame.lock');
    try {
      server = await listen(path);
    } catch (error) {
      if (code(error) !== 'EADDRINUSE') throw error;
      if (await answers(path)) throw inUse();
      // Nobody listens: the owner is gone. Replace its socket file once.
      try {
        unlinkSync(path);
      } catch (unlinkError) {
        if (code(unlinkError) !== 'ENOENT') throw unlinkError;
      }
      try {
        server = await listen(path);
      } catch (again) {
        if (code(again) === 'EADDRINUSE') throw inUse();
        throw again;
      }
    }
  }
  // The lock must not keep the process alive on its own.
  server.unref();
  return {
    release: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function listen(path: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    // A peer only checks that someone listens: hang up at once.
    const server = createServer((socket) => socket.destroy());
    server.once('error', reject);
    server.listen({ path, exclusive: true }, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/** Whether a live process listens on the socket file (a dead owner's file refuses connections). */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ path });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function code(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}
