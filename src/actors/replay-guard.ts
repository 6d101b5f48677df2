import type { Database } from 'lmdb';
import type { Storage } from '../storage/db.js';
import { sweepExpired } from '../storage/sweep.js';
import { clock } from '../util/clock.js';

/**
 * Remembers the `jti` of signed assertions already used until they expire, so an assertion that
 * carries one cannot be replayed, even across a restart. (Assertions without `jti` are not
 * tracked: ZITADEL's SDKs send identical ones within a second; see AssertionVerifier.) DPoP proofs
 * (src/services/dpop-proofs.ts) are remembered here too, under keys of their own (`dpop:<jkt>:<jti>`).
 *
 * With HTTP acceptor threads, each thread has its own guard on the same store, and one LMDB
 * write transaction decides each first use, so one assertion sent to two threads at once is
 * taken once. Memory then only remembers what this thread saw (a quick refusal of a replay).
 */
/** Longer than any leeway an assertion check grants past `exp` (app clock skew ≤ 5 s, plus 1 s). */
const REPLAY_MARGIN_SECONDS = 10;

export class ReplayGuardActor {
  /** replay key → exp (unix seconds) */
  private readonly seen = new Map<string, number>();
  private readonly shared: boolean;
  private readonly db: Database<number, string>;

  constructor(
    private readonly storage: Pick<Storage, 'usedAssertions' | 'durable' | 'decisions'>,
    options: {
      /** Other threads use the store too: first uses are decided in LMDB, and their entries swept from it. */
      shared?: boolean;
    } = {},
  ) {
    this.db = storage.usedAssertions;
    this.shared = options.shared ?? false;
    if (!this.shared) for (const { key, value } of this.db.getRange()) this.seen.set(key, value);
  }

  /**
   * True on first use (and remembers it, durably); false for a replay. An assertion is accepted a
   * little past its `exp` (clock skew leeway), so it is remembered for that margin too.
   */
  async firstUse(key: string, exp: number, nowSeconds = clock.seconds()): Promise<boolean> {
    const known = this.seen.get(key);
    if (known !== undefined && known >= nowSeconds) return false;
    const until = exp + REPLAY_MARGIN_SECONDS;
    // Taken in memory first: a second use on this thread is refused while the write runs.
    this.seen.set(key, until);
    if (!this.shared) {
      await this.storage.durable(this.db.put(key, until));
      return true;
    }
    // Decided on lmdb's write thread under LMDB's single writer, whichever thread asks. (An entry
    // expired but not yet swept also refuses: its assertion has expired too.) Memory forgets the
    // key once decided: the store answers from then on, and memory stays small.
    try {
      return await this.storage.durable(this.storage.decisions.insertIfAbsent(this.db, key, until));
    } finally {
      this.seen.delete(key);
    }
  }

  /** Forgets entries whose assertions have expired (from the store, a chunk per call, when threads share it). */
  async sweep(nowSeconds = clock.seconds()): Promise<number> {
    const writes: Promise<boolean>[] = [];
    for (const [key, exp] of this.seen) {
      if (exp < nowSeconds) {
        this.seen.delete(key);
        // Alone, memory holds every entry; shared, the store is swept below.
        if (!this.shared) writes.push(this.db.remove(key));
      }
    }
    if (!this.shared) {
      await Promise.all(writes);
      return writes.length;
    }
    // The whole store, a chunk per event-loop turn (other requests run between chunks).
    return sweepExpired(this.db, (exp) => exp < nowSeconds);
  }
}
