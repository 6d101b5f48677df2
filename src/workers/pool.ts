import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { Batcher, Slots } from './batcher.js';
import type { HashPasswordTask, SignBatchTask, VerifyPasswordResult, VerifySignatureItem, VerifySignaturesTask, VerifyPasswordTask } from './tasks.js';

/**
 * The worker threads that run CPU-heavy crypto, in two piscina pools:
 * - signing and assertion signature checks (short, batched tasks), on `threads` threads;
 * - password hashing and verification (up to ~1.5 s each, src/passwords/cost.ts), on their own
 *   `passwordThreads(threads)` threads with their own queue.
 * Password work never holds a signing thread, so however many sign-in attempts are queued (or
 * however costly the hashes they check), tokens are still signed promptly.
 */
export class CryptoPool {
  private readonly piscina: Piscina;
  private readonly passwords: Piscina;
  /** Batched work (signatures, assertion checks) takes one task per thread at a time. */
  readonly slots = new Slots(() => this.piscina.threads.length);
  private readonly verifier = new Batcher<VerifySignatureItem, boolean>(
    (items) => this.run<boolean[]>({ op: 'verifySignatures', items }),
    this.slots,
    // ~70 µs per ES256/EdDSA check: about 2 ms per batch.
    32,
  );

  constructor(threads: number) {
    this.piscina = fixedPool(threads);
    this.passwords = fixedPool(passwordThreads(threads));
  }

  get threads(): number {
    return this.piscina.threads.length;
  }

  get passwordThreads(): number {
    return this.passwords.threads.length;
  }

  /** Runs a signing or signature-check task (never password work: see passwordTask). */
  run<T>(task: SignBatchTask | VerifySignaturesTask): Promise<T> {
    return this.piscina.run(task) as Promise<T>;
  }

  private passwordTask<T>(task: HashPasswordTask | VerifyPasswordTask): Promise<T> {
    return this.passwords.run(task) as Promise<T>;
  }

  hashPassword(password: string): Promise<string> {
    return this.passwordTask<string>({ op: 'hashPassword', password });
  }

  verifyPassword(password: string, encodedHash: string): Promise<VerifyPasswordResult> {
    return this.passwordTask<VerifyPasswordResult>({ op: 'verifyPassword', password, encodedHash });
  }

  /** Checks a signature in the pool, batched with the others queued in the same turn. */
  verifySignature(item: VerifySignatureItem): Promise<boolean> {
    return this.verifier.submit(item);
  }

  async close(): Promise<void> {
    await Promise.all([this.piscina.destroy(), this.passwords.destroy()]);
  }
}

/**
 * Threads for password work: one fewer than the signing pool's (on 2 cores, password work keeps to
 * one of them however many attempts are queued), at least one. Costly hashes are bounded per
 * verification (src/passwords/cost.ts); this bounds how many cores they take together.
 */
export function passwordThreads(threads: number): number {
  return Math.max(1, threads - 1);
}

function fixedPool(threads: number): Piscina {
  return new Piscina({
    filename: fileURLToPath(new URL('./crypto-worker.js', import.meta.url)),
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: Number.POSITIVE_INFINITY,
    // One task per thread at a time: queued signatures then wait in the batcher and ride the
    // next task together instead of queuing as many small tasks.
    concurrentTasksPerWorker: 1,
  });
}
