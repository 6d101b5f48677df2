import { recordKind, type StorePort } from '../storage/store-port.js';
import { clock } from '../util/clock.js';

/** Longer than any leeway an assertion check grants past `exp` (app clock skew ≤ 5 s, plus 1 s). */
const REPLAY_MARGIN_SECONDS = 10;

/** Replay key → until when it is kept (unix seconds). */
const USED = recordKind<number>('usedAssertions');

/**
 * Remembers the `jti` of signed assertions already used until they expire, so an assertion that
 * carries one cannot be replayed, even across a restart. (Assertions without `jti` are not
 * tracked: ZITADEL's SDKs send identical ones within a second; see AssertionVerifier.) DPoP proofs
 * (src/services/dpop-proofs.ts) are remembered here too, under keys of their own (`dpop:<jkt>:<jti>`).
 *
 * Every first use is decided in the store (an insert-if-absent), whichever thread or node asks, so
 * one assertion sent to two threads or nodes at once is taken once. Memory only holds the uses this
 * guard is deciding right now (a second use on this thread is refused while the write runs).
 */
export class ReplayGuardActor {
  /** Uses being decided on this thread: replay key → until when it is kept. */
  private readonly deciding = new Map<string, number>();

  constructor(private readonly store: StorePort) {}

  /**
   * True on first use (and remembers it, durably); false for a replay. An assertion is accepted a
   * little past its `exp` (clock skew leeway), so it is remembered for that margin too.
   */
  async firstUse(key: string, exp: number, nowSeconds = clock.seconds()): Promise<boolean> {
    const known = this.deciding.get(key);
    if (known !== undefined && known >= nowSeconds) return false;
    const until = exp + REPLAY_MARGIN_SECONDS;
    this.deciding.set(key, until);
    // An entry expired but not yet swept also refuses: its assertion has expired too.
    try {
      return await this.store.durable(this.store.insertIfAbsent(USED, key, until));
    } finally {
      this.deciding.delete(key);
    }
  }

  /** Forgets entries whose assertions have expired (the whole store, a chunk at a time). */
  sweep(nowSeconds = clock.seconds()): Promise<number> {
    return this.store.sweep(USED, (until) => until < nowSeconds);
  }
}
