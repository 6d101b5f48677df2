import type { Database } from 'lmdb';

/** Key 0 holds the highest number pruned so far; entries are 1, 2, 3, … */
const PRUNED_THROUGH = 0;

/**
 * An append-only LMDB log numbered in commit order: the directory's change feed (DirectoryLog) and
 * the activity log (LmdbActivityLog). An entry takes its number inside the write transaction that
 * writes it (the last number there plus one), so numbers follow the order in which LMDB's one
 * writer commits, across threads and processes, and an entry never becomes visible before one with
 * a smaller number: a reader keeps only the last number it took. An aborted transaction takes its
 * numbers with it. Pruning by age keeps the highest number pruned, so numbers are never reused.
 */
export class NumberedLog<E> {
  /** The last number taken in the transaction callbacks running now (see append). */
  private lastInRun: number | undefined;

  constructor(
    readonly db: Database<E | number, number>,
    /** When an entry was written (the injected clock): what pruning goes by. */
    private readonly atOf: (entry: E) => number,
    /** What goes with a pruned entry, in its transaction (an index entry). */
    private readonly onPrune: (seq: number, entry: E) => void = () => undefined,
  ) {}

  /** The newest number written (or pruned), 0 for none. */
  last(): number {
    // Read without `limit` and left early: a range with `limit` fails inside an lmdb-js write transaction.
    for (const { key } of this.db.getRange({ reverse: true })) if (key !== PRUNED_THROUGH) return key;
    return this.prunedThrough();
  }

  prunedThrough(): number {
    return (this.db.get(PRUNED_THROUGH) as number | undefined) ?? 0;
  }

  /** Writes an entry, inside the write transaction (a transaction callback) of the change it logs; its number. */
  append(entry: E): number {
    // The last number is read once per synchronous run of transaction callbacks (an import's batch
    // logs thousands): nothing else writes in between, the write transaction being this thread's.
    if (this.lastInRun === undefined) {
      this.lastInRun = this.last();
      queueMicrotask(() => (this.lastInRun = undefined));
    }
    const seq = ++this.lastInRun;
    void this.db.put(seq, entry);
    return seq;
  }

  /** The entries from `start` on (or back from it), in number order; the pruned mark is not one. */
  *entries(options: { start?: number; reverse?: boolean; limit?: number } = {}): IterableIterator<{ seq: number; entry: E }> {
    const range = options.reverse ? { ...(options.start === undefined ? {} : { start: options.start }), end: PRUNED_THROUGH, reverse: true } : { start: Math.max(options.start ?? 1, 1) };
    for (const { key, value } of this.db.getRange({ ...range, ...(options.limit === undefined ? {} : { limit: options.limit }) })) {
      if (key !== PRUNED_THROUGH) yield { seq: key, entry: value as E };
    }
  }

  /**
   * Removes entries written before `before` (ms), oldest first, in transactions of at most `chunk`,
   * other work running between them. Resolves with how many went.
   */
  async prune(before: number, chunk = 2000): Promise<number> {
    let removed = 0;
    for (;;) {
      const n = await this.db.transaction(() => {
        let through = this.prunedThrough();
        let count = 0;
        for (const { key, value } of this.db.getRange({ start: through + 1, limit: chunk })) {
          if (this.atOf(value as E) >= before) break;
          void this.db.remove(key);
          this.onPrune(key, value as E);
          through = key;
          count++;
        }
        if (count > 0) void this.db.put(PRUNED_THROUGH, through);
        return count;
      });
      removed += n;
      if (n < chunk) return removed;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /** Sets the pruned mark (a copy of a log from elsewhere, whose numbers up to it are gone). */
  markPrunedThrough(through: number): void {
    if (through > 0) void this.db.put(PRUNED_THROUGH, through);
  }
}
