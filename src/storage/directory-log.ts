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

/** One changed record: which store, which key. What it became is read from the store. */
export interface DirectoryChange {
  readonly store: DirectoryStore;
  readonly id: string;
}

/** Where a directory table's writes are logged: its store's name and the log. */
export interface TableFeed {
  readonly store: DirectoryStore;
  readonly log: DirectoryLog;
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
 * One process writes the directory (the main thread; the offline CLI while no server runs), so
 * sequence numbers are handed out here without a transaction, in the order LMDB makes the writes
 * visible: a single put or remove takes its number when it is issued (lmdb-js runs those in call
 * order), a transaction callback (an import's batch, a new key set) when it runs (lmdb-js runs
 * queued callbacks after the queued single writes, in the same transaction or a later one). So an
 * entry never becomes visible before one with a smaller number, and a reader keeps only the last
 * number it took. An aborted transaction leaves a gap, which readers skip.
 */
export class DirectoryLog {
  private next: number;

  constructor(private readonly db: Database<Entry | number, number>) {
    this.next = this.last() + 1;
  }

  /** The newest sequence number written (or pruned), 0 for none: a copy loaded now applies what comes after. */
  last(): number {
    for (const { key } of this.db.getRange({ reverse: true, limit: 1 })) if (key !== PRUNED_THROUGH) return key;
    return this.prunedThrough();
  }

  /**
   * Logs a change: beside the record's own single write (same event-loop turn, so the same
   * transaction), or inside the transaction callback that writes the record. Its failure is the
   * record's write's: that one reports it.
   */
  record(store: DirectoryStore, id: string): void {
    this.db.put(this.next++, [store, id, clock.now()]).catch(() => {});
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
