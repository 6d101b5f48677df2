import { createReadStream, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { usage, failure } from './errors.js';
import type { Progress } from './progress.js';

/** Reads a bundle (a file, or stdin for `-`); writeOutput and writeFileAtomic write outputs (atomically, mode 0600). */
export async function readInput(path: string, progress: Progress): Promise<Buffer> {
  const stream = path === '-' ? process.stdin : createReadStream(path);
  let total: number | undefined;
  if (path !== '-') {
    try {
      total = fileSize(path);
    } catch (error) {
      throw usage(`--in ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
    }
  }
  const parts: Buffer[] = [];
  let read = 0;
  try {
    for await (const chunk of stream) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      parts.push(buf);
      read += buf.length;
      progress.bytes(read, total);
    }
  } catch (error) {
    throw failure(`--in ${path}: ${(error as Error).message}`);
  }
  return Buffer.concat(parts);
}

export function fileSize(path: string): number {
  const stat = statSync(path);
  if (stat.isDirectory()) throw new Error('is a directory');
  return stat.size;
}

/**
 * Writes a file whole: to a temporary file beside it, then renamed over it. Mode 0600 by default:
 * bundles carry password hashes and TOTP secrets, reports name every user.
 */
export function writeFileAtomic(path: string, data: Buffer | string, mode = 0o600): void {
  const temp = join(dirname(path), `.${Date.now().toString(36)}-${process.pid}.tmp`);
  try {
    writeFileSync(temp, data, { mode, flag: 'wx' });
    renameSync(temp, path);
  } catch (error) {
    try {
      unlinkSync(temp);
    } catch {
      /* not created */
    }
    throw error;
  }
}

export async function writeOutput(path: string, data: Buffer, progress: Progress): Promise<void> {
  if (path === '-') {
    const PIECE = 1024 * 1024;
    for (let at = 0; at < data.length; at += PIECE) {
      if (!process.stdout.write(data.subarray(at, at + PIECE))) await new Promise((r) => process.stdout.once('drain', r));
      progress.bytes(Math.min(at + PIECE, data.length), data.length);
    }
    return;
  }
  try {
    writeFileAtomic(path, data);
  } catch (error) {
    throw failure(`--out ${path}: ${(error as Error).message}`);
  }
}
