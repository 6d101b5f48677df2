/**
 * A first-in, first-out concurrency limit: at most `limit` tasks of the lane run at once, the rest
 * wait their turn here (not in the pool's queue, where they would stand before other work).
 */
export class Lane {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    // A finished task hands its place straight to the next waiter (the count does not drop in
    // between), so a newcomer cannot slip in ahead and exceed the limit.
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  /** Tasks waiting for a turn (for tests and metrics). */
  get queued(): number {
    return this.waiting.length;
  }
}
