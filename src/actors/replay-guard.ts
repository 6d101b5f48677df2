import type { Database } from 'lmdb';
import { clock } from '../util/clock.js';

/**
 * Remembers the `jti` of signed assertions already used until they expire, so an assertion that
 * carries one cannot be replayed, even across a restart. (Assertions without `jti` are not
 * tracked: ZITADEL's SDKs send identical ones within a second; see AssertionVerifier.)
 */
/** Longer than any leeway an assertion check grants past `exp` (app clock skew ≤ 5 s, plus 1 s). */
const REPLAY_MARGIN_SECONDS = 10;

export class ReplayGuardActor {
  /** replay key → exp (unix seconds) */
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly db: Database<number, string>,
    private readonly durable: <R>(write: Promise<R>) => Promise<R>,
  ) {
    for (const { key, value } of db.getRange()) this.seen.set(key, value);
  }

  /**
   * True on first use (and remembers it, durably); false for a replay. An assertion is accepted a
   * little past its `exp` (clock skew leeway), so it is remembered for that margin too.
   */
  async firstUse(key: string, exp: number, nowSeconds = clock.seconds()): Promise<boolean> {
    const known = this.seen.get(key);
    if (known !== undefined && known >= nowSeconds) return false;
    const until = exp + REPLAY_MARGIN_SECONDS;
    this.seen.set(key, until);
    await this.durable(this.db.put(key, until));
    return true;
  }

  /** Forgets entries whose assertions have expired. */
  async sweep(nowSeconds = clock.seconds()): Promise<number> {
    const writes: Promise<boolean>[] = [];
    for (const [key, exp] of this.seen) {
      if (exp < nowSeconds) {
        this.seen.delete(key);
        writes.push(this.db.remove(key));
      }
    }
    await Promise.all(writes);
    return writes.length;
  }
}
