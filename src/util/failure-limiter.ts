/**
 * Counts failures per key (e.g. wrong user codes per client address) in a sliding window: after
 * `max` within `windowMs` the key is blocked until its oldest failure leaves the window. Memory
 * only, bounded: at most `maxKeys` keys are tracked, the least recently failing one dropped first,
 * so a flood of addresses costs bounded memory (a dropped key starts again from zero).
 */
export class FailureLimiter {
  /** Failure times per key; Map order is the order of each key's last failure. */
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly maxKeys = 100_000,
  ) {}

  private recent(key: string, now: number): number[] {
    const times = this.failures.get(key);
    if (!times) return [];
    const kept = times.filter((at) => at > now - this.windowMs);
    if (kept.length === 0) this.failures.delete(key);
    return kept;
  }

  /** How long (ms) the key stays blocked: until enough of its failures leave the window; 0 when it is not. */
  blockedFor(key: string, now: number): number {
    const times = this.recent(key, now);
    if (times.length < this.max) return 0;
    return times[times.length - this.max]! + this.windowMs - now;
  }

  fail(key: string, now: number): void {
    const times = this.recent(key, now);
    times.push(now);
    // Keep only what can still block, and move the key to the end (most recent).
    this.failures.delete(key);
    this.failures.set(key, times.slice(-this.max));
    if (this.failures.size > this.maxKeys) this.failures.delete(this.failures.keys().next().value!);
  }
}
