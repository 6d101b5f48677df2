import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { Batcher, Slots } from './batcher.js';
import type { CryptoTask, VerifyPasswordResult, VerifySignatureItem } from './tasks.js';

/** The piscina pool that runs CPU-heavy crypto: JWT signing batches and password hashing. */
export class CryptoPool {
  private readonly piscina: Piscina;
  /** Batched work (signatures, assertion checks) takes one task per thread at a time. */
  readonly slots = new Slots(() => this.piscina.threads.length);
  private readonly verifier = new Batcher<VerifySignatureItem, boolean>(
    (items) => this.run<boolean[]>({ op: 'verifySignatures', items }),
    this.slots,
    // ~70 µs per ES256/EdDSA check: about 2 ms per batch.
    32,
  );

  constructor(threads: number) {
    this.piscina = new Piscina({
      filename: fileURLToPath(new URL('./crypto-worker.js', import.meta.url)),
      minThreads: threads,
      maxThreads: threads,
      idleTimeout: Number.POSITIVE_INFINITY,
      // One task per thread at a time: queued signatures then wait in the batcher and ride the
      // next task together instead of queuing as many small tasks.
      concurrentTasksPerWorker: 1,
    });
  }

  get threads(): number {
    return this.piscina.threads.length;
  }

  run<T>(task: CryptoTask): Promise<T> {
    return this.piscina.run(task) as Promise<T>;
  }

  hashPassword(password: string): Promise<string> {
    return this.run<string>({ op: 'hashPassword', password });
  }

  verifyPassword(password: string, encodedHash: string): Promise<VerifyPasswordResult> {
    return this.run<VerifyPasswordResult>({ op: 'verifyPassword', password, encodedHash });
  }

  /** Checks a signature in the pool, batched with the others queued in the same turn. */
  verifySignature(item: VerifySignatureItem): Promise<boolean> {
    return this.verifier.submit(item);
  }

  async close(): Promise<void> {
    await this.piscina.destroy();
  }
}
