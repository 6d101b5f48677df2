import { accessSync, closeSync, constants, fsyncSync, mkdirSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * The data dir is checked and created before anything else touches it, so that every way it can
 * be unusable ends start-up with one line naming the setting, the value and the reason (exit 2),
 * instead of an lmdb error without a path, or a hang.
 *
 * Directories are created one level at a time: Node's `mkdirSync(…, { recursive: true })` spins
 * forever on a path under a file system that answers ENOENT to mkdir (`/proc/x`).
 */
export class DataDirError extends Error {
  constructor(
    readonly dataDir: string,
    readonly reason: string,
  ) {
    super(`${dataDir}: ${reason}`);
  }
}

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  ENOTDIR: 'a part of the path is a file, not a directory',
  ENAMETOOLONG: 'the path is too long',
  ELOOP: 'too many symbolic links',
  ENOENT: 'the file system does not allow creating it',
  EINVAL: 'the file system does not support it',
};

function reason(error: unknown, what: string): string {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  return `${what}: ${REASONS[code] ?? (error as Error).message}${code ? ` (${code})` : ''}`;
}

/** Creates the directory and its missing parents, one level at a time. */
function createDirs(dir: string): void {
  const missing: string[] = [];
  let current = dir;
  for (;;) {
    try {
      const stat = statSync(current);
      if (!stat.isDirectory()) throw new DataDirError(dir, `${current} is not a directory`);
      break;
    } catch (error) {
      if (error instanceof DataDirError) throw error;
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') throw new DataDirError(dir, reason(error, `cannot read ${current}`));
      missing.push(current);
      const parent = dirname(current);
      if (parent === current) throw new DataDirError(dir, 'no part of the path exists');
      current = parent;
    }
  }
  for (const path of missing.reverse()) {
    try {
      mkdirSync(path, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw new DataDirError(dir, reason(error, `cannot create ${path}`));
    }
  }
}

/**
 * Makes sure the data dir exists, is a directory this process can write, and lives on a file
 * system that takes ordinary files with fsync (what LMDB, its lock file and the master key need).
 * Returns the absolute path.
 */
export function prepareDataDir(dataDir: string): string {
  const dir = resolve(dataDir);
  createDirs(dir);
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (error) {
    const uid = typeof process.getuid === 'function' ? ` (this process runs as uid ${process.getuid()})` : '';
    throw new DataDirError(dir, reason(error, `not writable${uid}`));
  }
  // A probe file: some file systems (procfs, sysfs, read-only mounts) refuse or drop writes.
  const probe = join(dir, `.sesame-probe-${process.pid}`);
  try {
    const fd = openSync(probe, 'w', 0o600);
    try {
      writeSync(fd, 'sesame');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    throw new DataDirError(dir, reason(error, 'cannot write files there'));
  } finally {
    rmSync(probe, { force: true });
  }
  return dir;
}
