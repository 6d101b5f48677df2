import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type * as PoolModule from '../../src/workers/pool.js';

/**
 * Password threads end once idle (each holds a V8 heap), and the next password task starts one
 * again; signing threads are kept. The pool runs its worker from dist/ (built by the test setup).
 */
const root = join(new URL('../..', import.meta.url).pathname);
const { CryptoPool, PASSWORD_THREAD_IDLE_MS } = (await import(pathToFileURL(join(root, 'dist', 'workers/pool.js')).href)) as typeof PoolModule;

/** Waits (at most `limitMs`) until `done` holds: piscina's idle timer runs on real time. */
async function until(done: () => boolean, limitMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!done()) {
    if (Date.now() - started > limitMs) throw new Error('not within the limit');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('crypto pool: idle password threads', () => {
  it('a password thread idle past its time ends; the next check starts one again and still answers', async () => {
    expect(PASSWORD_THREAD_IDLE_MS).toBe(60_000);
    const pool = new CryptoPool(1, 50);
    try {
      const hash = await pool.hashPassword('Correct-Horse-1');
      expect(pool.threadCounts().password).toBe(1);
      await until(() => pool.threadCounts().password === 0);
      expect((await pool.verifyPassword('Correct-Horse-1', hash)).ok).toBe(true);
      expect(pool.threadCounts().password).toBe(1);
    } finally {
      await pool.close();
    }
  });
});
