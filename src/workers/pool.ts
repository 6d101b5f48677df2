import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { isCostly, parseEncodedHash } from '../crypto/passwords/registry.js';
import { Batcher, Slots } from './batcher.js';
import { Lane } from './lane.js';
import { WORKER_YOUNG_GENERATION_MB } from '../util/thread-memory.js';
import { traced, tracingOn } from '../observability/tracing.js';
import type { HashPasswordTask, SignatureItem, SignBatchTask, VerifyPasswordResult, VerifySignaturesTask, VerifyPasswordTask } from './tasks.js';

/**
 * The worker threads that run CPU-heavy crypto, in two piscina pools:
 * - signing and assertion signature checks (short, batched tasks), on `threads` threads;
 * - password hashing and verification (up to ~1.5 s each, src/crypto/passwords/cost.ts), on their own
 *   `passwordThreads(threads)` threads with their own queue.
 * Password work never holds a signing thread, so however many sign-in attempts are queued (or
 * however costly the hashes they check), tokens are still signed promptly. Costly verifications
 * (imported hashes with high parameters) keep to a lane that leaves one password thread free, so
 * attempts against such users never delay an ordinary person's sign-in either.
 */
export class CryptoPool {
  private readonly piscina: Piscina;
  private readonly passwords: Piscina;
  /** Batched work (signatures, assertion checks) takes one task per thread at a time. */
  readonly slots = new Slots(() => this.threads);
  private readonly verifier = new Batcher<SignatureItem, boolean>(
    (items) => this.run<boolean[]>({ op: 'verifySignatures', items }),
    this.slots,
    // ~70 µs per ES256/EdDSA check: about 2 ms per batch.
    32,
    'verify',
  );

  private readonly passwordLifecycle = { started: 0, ended: 0 };
  /** Costly verifications: all password threads but one. */
  private readonly costly: Lane;

  constructor(
    readonly threads: number,
    /** How long an idle password thread is kept (see PASSWORD_THREAD_IDLE_MS). */
    passwordIdleMs = PASSWORD_THREAD_IDLE_MS,
  ) {
    this.piscina = threadPool(threads);
    this.passwords = threadPool(this.passwordThreads, passwordIdleMs);
    this.passwords.on('workerCreate', () => this.passwordLifecycle.started++);
    this.passwords.on('workerDestroy', () => this.passwordLifecycle.ended++);
    this.costly = new Lane(this.passwordThreads - 1);
  }

  get passwordThreads(): number {
    return passwordThreads(this.threads);
  }

  /** Runs a signing or signature-check task (never password work: see passwordTask). */
  run<T>(task: SignBatchTask | VerifySignaturesTask): Promise<T> {
    return this.piscina.run(task) as Promise<T>;
  }

  private passwordTask<T>(task: HashPasswordTask | VerifyPasswordTask): Promise<T> {
    const run = () => this.passwords.run(task) as Promise<T>;
    return tracingOn() ? traced(`pool ${task.op}`, {}, run) : run();
  }

  /** Password threads started and ended so far (an idle one ends, see PASSWORD_THREAD_IDLE_MS). */
  passwordThreadLifecycle(): { started: number; ended: number } {
    return { ...this.passwordLifecycle };
  }

  /** Threads running, per pool (metrics: what the pools hold of the process's memory). */
  threadCounts(): { crypto: number; password: number } {
    return { crypto: this.piscina.threads.length, password: this.passwords.threads.length };
  }

  /** Tasks waiting for a thread, per pool (metrics). */
  queueSizes(): { crypto: number; password: number } {
    return { crypto: this.piscina.queueSize, password: this.passwords.queueSize };
  }

  hashPassword(password: string): Promise<string> {
    return this.passwordTask<string>({ op: 'hashPassword', password });
  }

  /**
   * Hashing in bulk (an import's plaintext passwords): through the costly lane, so however many
   * an import hashes at once, one password thread stays free for sign-ins.
   */
  hashPasswordInBulk(password: string): Promise<string> {
    return this.costly.run(() => this.hashPassword(password));
  }

  verifyPassword(password: string, encodedHash: string): Promise<VerifyPasswordResult> {
    const verify = () => this.passwordTask<VerifyPasswordResult>({ op: 'verifyPassword', password, encodedHash });
    return isCostlyHash(encodedHash) ? this.costly.run(verify) : verify();
  }

  /** Checks a signature in the pool, batched with the others queued in the same turn. */
  verifySignature(item: SignatureItem): Promise<boolean> {
    return this.verifier.submit(item);
  }

  async close(): Promise<void> {
    await Promise.all([this.piscina.destroy(), this.passwords.destroy()]);
  }
}

/**
 * Threads for password work, beside the signing threads: as many (two at least), so that one is
 * always left for ordinary sign-ins while the others check costly hashes. Each verification is
 * bounded (src/crypto/passwords/cost.ts); the costly lane bounds how many threads such checks take together.
 */
export function passwordThreads(threads: number): number {
  return Math.max(2, threads);
}

function isCostlyHash(encodedHash: string): boolean {
  const parsed = parseEncodedHash(encodedHash);
  return parsed !== undefined && isCostly(parsed);
}

/**
 * Password threads idle this long end (each is its own V8 heap, ~15-20 MB of RSS): sign-ins come in
 * bursts, and a server that checked passwords once (an administrator's sign-in, a bench's setup)
 * should not hold their threads for good. The next sign-in starts one again (~0.1-0.2 s of CPU).
 * Signing threads are kept: tokens are the steady load.
 */
export const PASSWORD_THREAD_IDLE_MS = 60_000;

/**
 * Up to `threads` threads, each started when work first needs it, and kept (or ended once idle for
 * `idleTimeout` ms). A thread costs ~0.1-0.2 s of CPU to start (loading the crypto modules); a
 * server that never hashes a password or signs with RSA (the CLI offline, ES256 deployments without
 * password sign-ins) starts none, and one under load starts them all within its first requests.
 */
function threadPool(threads: number, idleTimeout = Number.POSITIVE_INFINITY): Piscina {
  return new Piscina({
    filename: fileURLToPath(new URL('./crypto-worker.js', import.meta.url)),
    minThreads: 0,
    maxThreads: threads,
    idleTimeout,
    // One task per thread at a time: queued signatures then wait in the batcher and ride the
    // next task together instead of queuing as many small tasks.
    concurrentTasksPerWorker: 1,
    resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
  });
}
