import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DataDirInUseError, lockDataDir, type LockKind } from '../../src/storage/data-dir-lock.js';

/**
 * The data dir lock, both kinds: the abstract socket Linux uses and the socket file used
 * elsewhere (exercised here on Linux too). A lock is exclusive, released on release(), and a
 * lock left by a killed process does not block the next start.
 */
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'sesame-lock-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const kinds: LockKind[] = process.platform === 'linux' ? ['abstract', 'file'] : ['file'];

describe.each(kinds)('data dir lock (%s)', (kind) => {
  it('is exclusive until released, per directory, also through a symlink', async () => {
    const dir = tempDir();
    const lock = await lockDataDir(dir, kind);
    await expect(lockDataDir(dir, kind)).rejects.toBeInstanceOf(DataDirInUseError);
    const link = join(tempDir(), 'link');
    symlinkSync(dir, link);
    if (kind === 'abstract') await expect(lockDataDir(link, kind)).rejects.toBeInstanceOf(DataDirInUseError);
    const other = await lockDataDir(tempDir(), kind);
    await other.release();
    await lock.release();
    await (await lockDataDir(dir, kind)).release();
  });
});

describe('data dir lock (file)', () => {
  it('replaces the socket file of a process killed with SIGKILL', async () => {
    const dir = tempDir();
    const path = join(dir, 'sesame.lock');
    // Another process takes the lock as Sesame does (a socket listening on the file), then dies.
    const child = spawn(process.execPath, ['-e', `require('node:net').createServer().listen(process.argv[1], () => console.log('ready'))`, path], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
    await expect(lockDataDir(dir, 'file')).rejects.toBeInstanceOf(DataDirInUseError);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    expect(existsSync(path)).toBe(true);
    const lock = await lockDataDir(dir, 'file');
    await expect(lockDataDir(dir, 'file')).rejects.toBeInstanceOf(DataDirInUseError);
    await lock.release();
  });
});
