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

/**
 * Waits until `done` holds: piscina's idle timer runs on real time (it takes no clock). What is
 * checked are the pool's thread start and end events, never how much time passed, so a slow
 * machine only waits longer (the limit is a guard against a hang).
 */
async function until(done: () => boolean, limitMs = 60_000): Promise<void> {
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
      expect(pool.passwordThreadLifecycle().started).toBe(1);
      await until(() => pool.passwordThreadLifecycle().ended === 1);
      expect(pool.threadCounts().password).toBe(0);
      expect((await pool.verifyPassword('Correct-Horse-1', hash)).ok).toBe(true);
      expect(pool.passwordThreadLifecycle().started).toBe(2);
    } finally {
      await pool.close();
    }
  });
});
