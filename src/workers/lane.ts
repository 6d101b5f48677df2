/**
 * A first-in, first-out concurrency limit: at most `limit` tasks of the lane run at once, the rest
 * wait their turn here (not in the pool's queue, where they would stand before other work).
 */
export class Lane {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await task();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  /** Tasks waiting for a turn (for tests and metrics). */
  get queued(): number {
    return this.waiting.length;
  }
}
