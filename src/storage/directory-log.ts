import type { Database } from 'lmdb';
import { clock } from '../util/clock.js';
import { NumberedLog } from './numbered-log.js';

/** The stores that make up the directory: what every HTTP thread keeps a copy of. */
export type DirectoryStore = 'orgs' | 'projects' | 'users' | 'members' | 'userGrants' | 'pats' | 'policies' | 'apps' | 'appKeys' | 'machineKeys' | 'machineSecrets' | 'signingKeys' | 'meta';

/** Every store of the directory, in one list: what a copy loads whole, what a copy between stores moves as the directory. */
export const DIRECTORY_STORES: readonly DirectoryStore[] = [
  'orgs',
  'projects',
  'users',
  'members',
  'userGrants',
  'pats',
  'policies',
  'apps',
  'appKeys',
  'machineKeys',
  'machineSecrets',
  'signingKeys',
  'meta',
];

/** One changed record: which store, which key. What it became is read from the store. */
export interface DirectoryChange {
  readonly store: DirectoryStore;
  readonly id: string;
}

/** A log entry: the store, the key, when it was written (the injected clock; what pruning goes by). */
type Entry = [store: DirectoryStore, id: string, at: number];

/**
 * The directory's change feed: each write to a directory record also writes an entry naming it,
 * keyed by a sequence number, in the same LMDB transaction (a NumberedLog: numbers in commit order).
 * A copy of the directory (an HTTP acceptor thread's) reads the entries after the last one it
 * applied and re-reads those records only, instead of loading the whole directory again. Any thread
 * (and the offline CLI) may write the directory. PostgreSQL keeps the same table
 * (postgres/directory.ts).
 */
export class DirectoryLog {
  private readonly log: NumberedLog<Entry>;

  constructor(db: Database<Entry | number, number>) {
    this.log = new NumberedLog<Entry>(db, (entry) => entry[2]);
  }

  /** The newest sequence number written (or pruned), 0 for none: a copy loaded now applies what comes after. */
  last(): number {
    return this.log.last();
  }

  /**
   * Logs a change, inside the write transaction (a transaction callback) that writes the record:
   * numbered there, so it commits with the record or not at all.
   */
  record(store: DirectoryStore, id: string): void {
    this.log.append([store, id, clock.now()]);
  }

  /**
   * The changes after `after`, up to `limit` of them, with the last sequence number read; undefined
   * when the log no longer reaches back that far (pruned) or more than `limit` are waiting: the
   * copy is then loaded again whole.
   */
  since(after: number, limit: number): { changes: DirectoryChange[]; last: number } | undefined {
    if (after < this.log.prunedThrough()) return undefined;
    const changes: DirectoryChange[] = [];
    let last = after;
    for (const { seq, entry } of this.log.entries({ start: after + 1, limit: limit + 1 })) {
      if (changes.length === limit) return undefined;
      const [store, id] = entry;
      changes.push({ store, id });
      last = seq;
    }
    return { changes, last };
  }

  /**
   * Removes entries written before `before` (ms), oldest first, in transactions of at most `chunk`;
   * a copy that had not applied them yet loads the directory whole. Resolves with how many went.
   */
  prune(before: number, chunk = 2000): Promise<number> {
    return this.log.prune(before, chunk);
  }
}
