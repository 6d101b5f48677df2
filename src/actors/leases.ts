import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Lease } from '../storage/decisions.js';
import { recordKind, type StorePort } from '../storage/store-port.js';
import { clock } from '../util/clock.js';
import { KeyedQueue } from '../util/keyed-queue.js';

const LEASES = recordKind<Lease>('leases');

/** The longest pause between two tries for a lease another holder has (ms): short work waits little. */
const MOST_PAUSE_MS = 20;

/**
 * Leases held in the store: of the threads and processes on one data dir (later, the nodes on one
 * database) one does what a lease names at a time, and another takes over once the holder releases
 * it or stops renewing it. Each instance is one holder, under an id drawn when it is made (one per
 * thread).
 */
export class LeasesActor {
  readonly holder = randomBytes(9).toString('base64url');
  /** This holder's own turns for one name, one after another (a holder renews its own lease). */
  private readonly turns = new KeyedQueue();

  constructor(
    private readonly store: StorePort,
    /**
     * This thread is the only one serving from the store (one HTTP thread; the data dir's lock
     * keeps other processes out): `exclusive` needs its own turns only, no lease in the store.
     */
    private readonly alone = false,
  ) {}

  /** Takes or renews the lease `name` for `ttlMs`; true when this holder has it now. */
  hold(name: string, ttlMs: number, now = clock.now()): Promise<boolean> {
    return this.store.lease(LEASES, name, this.holder, now, now + ttlMs);
  }

  /**
   * Whether the lease may be taken now, as committed (a read, no write transaction): a waiter
   * tries to take it only then, so waiting costs the store nothing (a burst of guesses at one
   * person's password, spread over every thread, does not load LMDB's one writer).
   */
  private async mayBeFree(name: string): Promise<boolean> {
    const lease = await this.store.get(LEASES, name);
    return lease === undefined || lease.holder === this.holder || lease.until <= clock.now();
  }

  /** Gives the lease `name` up, if this holder has it. */
  async release(name: string): Promise<void> {
    await this.store.update(LEASES, name, (lease) => (lease?.holder === this.holder ? null : undefined));
  }

  /**
   * Runs `work` while holding the lease `name` for at most `ttlMs` (its holder ending meanwhile
   * frees it then), one run at a time whichever thread or process asks: a run waits for the one
   * before, pausing between tries (the store has no wake-up to wait on; PostgreSQL would take
   * `pg_advisory_xact_lock` instead). Released at the end, whatever `work` did. Alone, only this
   * holder's own turns.
   */
  exclusive<R>(name: string, ttlMs: number, work: () => Promise<R>): Promise<R> {
    return this.turns.run(name, async () => {
      if (this.alone) return work();
      for (let pause = 1; !((await this.mayBeFree(name)) && (await this.hold(name, ttlMs))); pause = Math.min(pause * 2, MOST_PAUSE_MS)) await sleep(pause);
      try {
        return await work();
      } finally {
        await this.release(name).catch(() => {});
      }
    });
  }
}
