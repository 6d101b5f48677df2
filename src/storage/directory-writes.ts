import type { Database } from 'lmdb';
import { SYSTEM, stampEvents, type Editor, type EventDraft, type NewEvent } from '../model/activity.js';
import { WriteConflict } from '../model/errors.js';
import { rowEvents } from '../model/row-events.js';
import { clock } from '../util/clock.js';
import type { LmdbActivityLog } from './activity-log.js';
import type { DirectoryLog, DirectoryStore } from './directory-log.js';
import { sameVersion } from './same-version.js';
import type { UniqueKey, UniqueKeys } from './unique-keys.js';

/**
 * How the directory (orgs, users, projects, apps, grants, keys, settings) is written: every change
 * is a commit the store decides, whatever the writer's copy knew. A commit names its rows, each with
 * the version its writer read (`base`, compared by `sequence`), and the unique keys it takes and
 * frees; the store writes all of it and logs each row in the directory's change feed, in one
 * transaction, or refuses it whole: `WriteConflict` when a row moved since it was read, the key's
 * own error when another record holds a key. The activity log's events for the rows (model/row-events.ts),
 * stamped with the commit's editor, are written in the same transaction. LMDB: one child write transaction
 * (`LmdbDirectoryWrites`). PostgreSQL: one transaction of conditional statements (`UPDATE … WHERE
 * sequence = $base`, the keys `INSERT … ON CONFLICT DO NOTHING`, the feed rows), then a NOTIFY.
 */
export interface RowWrite {
  store: DirectoryStore;
  id: string;
  /** The row as written; null removes it. */
  value: unknown;
  /** The row as the writer read it (undefined: there was none): the store must still hold that version. */
  base: unknown;
}

/** The unique keys a write takes and frees in the store, in its transaction (see UniqueKeys). */
export interface KeyChanges {
  readonly take?: readonly UniqueKey[];
  readonly free?: readonly { key: string; owner: string }[];
  /** Every key under a prefix the owner holds (a registered client's place in its project). */
  readonly freeOwned?: readonly { prefix: string; owner: string }[];
}

/** Where a directory table's writes go (its store's name, the directory's commits, which log them and hold its records' unique keys) and are announced. */
export interface TableFeed {
  readonly store: DirectoryStore;
  readonly writes: DirectoryWrites;
  /** Moves the directory version, so the copies take what was logged (see Storage.directoryChanged). */
  readonly announce: () => void;
}

export interface DirectoryCommit {
  rows: readonly RowWrite[];
  keys?: KeyChanges | undefined;
  /**
   * Runs first inside the commit, before anything is checked or written (LMDB runs the transaction
   * later than it was asked for): a writer's own last checks; a throw refuses the commit.
   */
  inside?: () => void;
  /** Who makes the change (the activity log's editor); Sesame itself when absent. */
  by?: Editor | undefined;
  /** Events besides those the rows stand for (model/row-events.ts), in the same transaction. */
  events?: readonly EventDraft[] | undefined;
}

/** The events a commit writes: what its rows stand for (each against the row as stored before), and its own. */
export function commitEvents(rows: readonly { store: DirectoryStore; id: string; value: unknown }[], stored: (row: number) => unknown, commit: Pick<DirectoryCommit, 'by' | 'events'>): NewEvent[] {
  const drafts = rows.flatMap((row, i) => {
    try {
      return rowEvents(row.store, row.id, stored(i), row.value);
    } catch {
      // A row the rule cannot read (a record of an older shape) is still logged, as a change: never a commit refused for its log.
      return [{ type: `${row.store}.changed`, aggregateType: row.store, aggregateId: row.id, resourceOwner: '' }];
    }
  });
  if (commit.events) drafts.push(...commit.events);
  return drafts.length === 0 ? [] : stampEvents(drafts, commit.by ?? SYSTEM, clock.now());
}

export interface DirectoryWrites {
  /** Resolves once committed (the caller adds durability); rejects, nothing written, when refused. */
  commit(commit: DirectoryCommit): Promise<void>;
  /**
   * Changes one row as it is stored when the change is made: `next(stored)` gives the new row, or
   * undefined for no change; it may throw to refuse (nothing is written). Resolves with the row as
   * left and whether it was written.
   */
  change<T>(store: DirectoryStore, id: string, next: (stored: T | undefined) => T | undefined, by?: Editor): Promise<{ row: T | undefined; written: boolean }>;
  /** Takes unique keys no one holds yet, for their owners (a data dir from before the store held them: once, at start). */
  buildKeys(keys: Iterable<{ key: string; owner: string }>): Promise<void>;
  /** Removes change-feed entries written before `before` (ms): a copy that had not taken them in loads whole. */
  pruneFeed(before: number): Promise<number>;
}

/** The directory's writes on LMDB. */
export class LmdbDirectoryWrites implements DirectoryWrites {
  constructor(
    private readonly root: Database<any, any>,
    private readonly dbOf: (store: DirectoryStore) => Database<any, string>,
    private readonly log: DirectoryLog,
    private readonly uniqueKeys: UniqueKeys,
    private readonly activity: LmdbActivityLog,
  ) {}

  commit({ rows, keys, inside, by, events }: DirectoryCommit): Promise<void> {
    // A child transaction: a throw inside aborts its writes (lmdb-js commits the writes a plain
    // transaction callback made before it threw).
    return this.root.childTransaction(() => {
      inside?.();
      const stored = rows.map(({ store, id, base }) => {
        const row = this.dbOf(store).get(id);
        if (!sameVersion(row, base)) throw new WriteConflict(id, undefined, store);
        return row;
      });
      for (const { key, owner } of keys?.free ?? []) this.uniqueKeys.freeIn(key, owner);
      for (const { prefix, owner } of keys?.freeOwned ?? []) this.uniqueKeys.freeOwnedIn(prefix, owner);
      for (const unique of keys?.take ?? []) this.uniqueKeys.takeIn(unique);
      // Each row's change logged as it is written: numbered as the transaction runs (see DirectoryLog).
      for (const { store, id, value } of rows) {
        if (value === null) void this.dbOf(store).remove(id);
        else void this.dbOf(store).put(id, value);
        this.log.record(store, id);
      }
      this.activity.append(commitEvents(rows, (i) => stored[i], { by, events }));
    });
  }

  buildKeys(keys: Iterable<{ key: string; owner: string }>): Promise<void> {
    return this.uniqueKeys.build(keys);
  }

  pruneFeed(before: number): Promise<number> {
    return this.log.prune(before);
  }

  change<T>(store: DirectoryStore, id: string, next: (stored: T | undefined) => T | undefined, by?: Editor): Promise<{ row: T | undefined; written: boolean }> {
    const db = this.dbOf(store);
    // A child transaction: a throw in `next` aborts whatever the callback wrote.
    return db.childTransaction(() => {
      const stored = db.get(id) as T | undefined;
      const row = next(stored);
      if (row === undefined) return { row: stored, written: false };
      void db.put(id, row);
      this.log.record(store, id);
      this.activity.append(commitEvents([{ store, id, value: row }], () => stored, { by }));
      return { row, written: true };
    });
  }
}
