import { clock } from '../util/clock.js';

/**
 * Counts failed attempts per key (a user id) in a sliding window: after `max` failures within
 * `windowMs`, further attempts are refused until the oldest failure leaves the window. Used for
 * TOTP codes, whose small code space must not be brute-forced across parallel login requests.
 */
export class AttemptLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
  ) {}

  private recent(key: string, now: number): number[] {
    const list = (this.failures.get(key) ?? []).filter((at) => at > now - this.windowMs);
    if (list.length === 0) this.failures.delete(key);
    else this.failures.set(key, list);
    return list;
  }

  blocked(key: string, now = clock.now()): boolean {
    return this.recent(key, now).length >= this.max;
  }

  fail(key: string, now = clock.now()): void {
    this.failures.set(key, [...this.recent(key, now), now]);
  }

  reset(key: string): void {
    this.failures.delete(key);
  }
}

/** Runs tasks for the same key one after another (e.g. password checks of one user). */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
