import type { Database } from 'lmdb';
import { clock } from '../util/clock.js';

/** The stores that make up the directory: what every HTTP thread keeps a copy of. */
export type DirectoryStore =
  | 'orgs'
  | 'projects'
  | 'users'
  | 'members'
  | 'userGrants'
  | 'pats'
  | 'policies'
  | 'apps'
  | 'appKeys'
  | 'machineKeys'
  | 'machineSecrets'
  | 'signingKeys'
  | 'meta';

/** Every store of the directory, in one list: what a copy loads whole, what a copy between stores moves as the directory. */
export const DIRECTORY_STORES: readonly DirectoryStore[] = ['orgs', 'projects', 'users', 'members', 'userGrants', 'pats', 'policies', 'apps', 'appKeys', 'machineKeys', 'machineSecrets', 'signingKeys', 'meta'];

/** One changed record: which store, which key. What it became is read from the store. */
export interface DirectoryChange {
  readonly store: DirectoryStore;
  readonly id: string;
}


/** A log entry: the store, the key, when it was written (the injected clock; what pruning goes by). */
type Entry = [store: DirectoryStore, id: string, at: number];

/** Key 0 holds the highest sequence pruned so far; entries are 1, 2, 3, … */
const PRUNED_THROUGH = 0;

/**
 * The directory's change feed: each write to a directory record also writes an entry naming it,
 * keyed by a sequence number, in the same LMDB transaction. A copy of the directory (an HTTP
 * acceptor thread's) reads the entries after the last one it applied and re-reads those records
 * only, instead of loading the whole directory again. PostgreSQL would keep the same table (a
 * BIGSERIAL key, written in the statement's transaction) and NOTIFY after the commit.
 *
 * Any thread (and the offline CLI) may write the directory: an entry takes its number inside the
 * write transaction that writes the record (the last number there plus one), so numbers follow the
 * order in which LMDB's one writer commits, and an entry never becomes visible before one with a
 * smaller number: a reader keeps only the last number it took. An aborted transaction takes its
 * numbers with it.
 */
export class DirectoryLog {
  /** The last number taken in the transaction callbacks running now (see record). */
  private lastInRun: number | undefined;

  constructor(private readonly db: Database<Entry | number, number>) {}

  /** The newest sequence number written (or pruned), 0 for none: a copy loaded now applies what comes after. */
  last(): number {
    // Read without `limit` and left early: a range with `limit` fails inside an lmdb-js write transaction.
    for (const { key } of this.db.getRange({ reverse: true })) if (key !== PRUNED_THROUGH) return key;
    return this.prunedThrough();
  }

  /**
   * Logs a change, inside the write transaction (a transaction callback) that writes the record:
   * numbered there, so it commits with the record or not at all.
   */
  record(store: DirectoryStore, id: string): void {
    // The last number is read once per synchronous run of transaction callbacks (an import's batch
    // logs thousands): nothing else writes in between, the write transaction being this thread's.
    if (this.lastInRun === undefined) {
      this.lastInRun = this.last();
      queueMicrotask(() => (this.lastInRun = undefined));
    }
    void this.db.put(++this.lastInRun, [store, id, clock.now()]);
  }

  /**
   * The changes after `after`, up to `limit` of them, with the last sequence number read; undefined
   * when the log no longer reaches back that far (pruned) or more than `limit` are waiting: the
   * copy is then loaded again whole.
   */
  since(after: number, limit: number): { changes: DirectoryChange[]; last: number } | undefined {
    if (after < this.prunedThrough()) return undefined;
    const changes: DirectoryChange[] = [];
    let last = after;
    for (const { key, value } of this.db.getRange({ start: after + 1, limit: limit + 1 })) {
      if (changes.length === limit) return undefined;
      const [store, id] = value as Entry;
      changes.push({ store, id });
      last = key;
    }
    return { changes, last };
  }

  /**
   * Removes entries written before `before` (ms), oldest first, in transactions of at most `chunk`;
   * a copy that had not applied them yet loads the directory whole. Resolves with how many went.
   */
  async prune(before: number, chunk = 2000): Promise<number> {
    let removed = 0;
    for (;;) {
      const n = await this.db.transaction(() => {
        let through = this.prunedThrough();
        let count = 0;
        for (const { key, value } of this.db.getRange({ start: through + 1, limit: chunk })) {
          if ((value as Entry)[2] >= before) break;
          void this.db.remove(key);
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

  private prunedThrough(): number {
    return (this.db.get(PRUNED_THROUGH) as number | undefined) ?? 0;
  }
}
