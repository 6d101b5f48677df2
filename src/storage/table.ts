import type { BatchTarget, WriteBatch } from './batch.js';
import type { View } from '../util/readonly.js';
import type { Storage } from './db.js';
import type { DirectoryStore } from './directory-log.js';
import type { KeyChanges, TableFeed } from './directory-writes.js';
import type { DirectoryReader } from './directory-reader.js';
import type { Editor } from '../model/activity.js';

export type { KeyChanges };

/** Rows in id order (as LMDB keeps them), e.g. for an export. */
export function inIdOrder<T extends { readonly id: string }>(rows: Iterable<T>): T[] {
  return [...rows].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * An actor's in-memory copy of one store of the directory. Reads never touch the store and hand out
 * read-only views of the rows (no copies). A put or remove is visible at once and resolves when the
 * store committed it (a commit the store decides: DirectoryWrites); if that write fails, the memory
 * change is taken back (unless a newer write to the row came meanwhile, which then stands). Rows
 * staged in a WriteBatch are seen only through that batch until it commits. The copy is loaded, and
 * takes in the rows the change feed names, through a DirectoryReader.
 */
export class Table<T extends { id: string }> implements BatchTarget {
  private readonly rows = new Map<string, T>();
  /** Ids staged in batches not yet committed, with how many batches stage each. */
  private readonly claims = new Map<string, number>();
  /** Rows whose write is under way (or failed), with the row each replaced: what a failed write goes back to. */
  private readonly replaced = new WeakMap<T, T | undefined>();
  private readonly failed = new WeakSet<T>();

  /** A table of the directory store `store`: its writes durable with `durableDirectory` and logged in the directory's change feed. */
  static ofDirectory<T extends { id: string }>(
    storage: Pick<Storage, 'durable' | 'durableDirectory' | 'directoryWrites' | 'directoryReader' | 'directoryChanged'>,
    store: Exclude<DirectoryStore, 'signingKeys' | 'meta'>,
  ): Table<T> {
    return new Table<T>(storage.directoryReader, { store, writes: storage.directoryWrites, announce: storage.directoryChanged }, storage.durableDirectory, storage.durable);
  }

  constructor(
    private readonly reader: DirectoryReader,
    /** Where its writes go: its store, the directory's commits (which log them for the other copies), and the announcement. */
    readonly feed: TableFeed,
    private readonly durable: <R>(write: Promise<R>) => Promise<R> = (write) => write,
    /** For `put(row, { quiet: true })`: durable without telling the HTTP acceptor threads (see Storage.durableDirectory). */
    private readonly durableQuiet: <R>(write: Promise<R>) => Promise<R> = durable,
  ) {
    for (const row of reader.rows<T>(feed.store)) this.rows.set(row.id, row);
  }

  /** The row; with `batch`, the batch's staged version of it when it has one. */
  get(id: string, batch?: WriteBatch): View<T> | undefined {
    if (batch) {
      // null: the batch removes the row.
      const staged = batch.staged(this, id) as T | null | undefined;
      if (staged !== undefined) return (staged ?? undefined) as View<T> | undefined;
    }
    return this.rows.get(id) as View<T> | undefined;
  }

  /** Whether a committed (or written, awaiting its commit) row has this id. */
  has(id: string): boolean {
    return this.rows.has(id);
  }

  /** Whether an id is in use: a row has it or some batch stages a row under it (checks for new ids). */
  taken(id: string): boolean {
    return this.rows.has(id) || this.claims.has(id);
  }

  values(): IterableIterator<View<T>> {
    return this.rows.values() as IterableIterator<View<T>>;
  }

  /** The rows, with `batch`'s staged ones in place of (or besides) the committed ones. */
  *valuesIn(batch: WriteBatch): IterableIterator<View<T>> {
    const staged = new Set<string>();
    for (const [id, row] of batch.stagedRows(this) as IterableIterator<[string, T | null]>) {
      staged.add(id);
      if (row) yield row as View<T>;
    }
    for (const row of this.rows.values()) if (!staged.has(row.id)) yield row as View<T>;
  }

  get size(): number {
    return this.rows.size;
  }

  /**
   * Writes a row; it is visible at once, and taken back if the write fails: to the last version
   * not lost with it (a newer write to the row stands; an older one that failed too is skipped).
   * `quiet`: a change no HTTP acceptor thread reads (a failure counter), so their copies are not
   * reloaded for it; they take it with the next change that does reload them.
   */
  put(row: T, options?: { quiet?: boolean; keys?: KeyChanges; by?: Editor | undefined }): Promise<boolean> {
    const id = row.id;
    const current = this.rows.get(id);
    // The same object written again keeps what it replaced the first time (no cycle to walk back).
    const previous = current === row ? this.replaced.get(row) : current;
    this.rows.set(id, row);
    this.replaced.set(row, previous);
    const write = this.feed.writes.commit({ rows: [{ store: this.feed.store, id, value: row, base: previous }], keys: options?.keys, by: options?.by }).then(() => true);
    return (options?.quiet ? this.durableQuiet : this.durable)(write).then(
      (done) => {
        this.replaced.delete(row);
        this.reader.committed(this.feed.store, id, row);
        return done;
      },
      (error: unknown) => {
        this.failed.add(row);
        if (this.rows.get(id) === row) {
          let back = previous;
          while (back && this.failed.has(back)) back = this.replaced.get(back);
          if (back) this.rows.set(id, back);
          else this.rows.delete(id);
        }
        throw error;
      },
    );
  }

  /**
   * Changes a row as it is stored when the change is made, a compare-and-set for rows that more
   * than one thread writes (a person's failure counts and state: the login decides them on every
   * thread): `next(stored)` gives the new row, or undefined for no change; it may throw to refuse
   * (nothing is written). One write transaction, its read inside it; this copy then holds the row
   * as committed. Resolves with the row as left (undefined: there is none). `quiet`, see put.
   * PostgreSQL: `SELECT … FOR UPDATE` and the `UPDATE` in one transaction.
   */
  async change(id: string, next: (stored: View<T> | undefined) => T | undefined, options?: { quiet?: (row: View<T>) => boolean; by?: Editor | undefined }): Promise<View<T> | undefined> {
    let announce = false;
    const decide = (stored: View<T> | undefined) => {
      const row = next(stored);
      announce = row !== undefined && !(options?.quiet?.(row as View<T>) ?? false);
      return row;
    };
    const decided = this.feed.writes.change<View<T>>(this.feed.store, id, decide as (stored: View<T> | undefined) => View<T> | undefined, options?.by);
    // Durable; the copies' version moves only for a change they read (whether it is one is known
    // only once `next` ran, inside the transaction), also after a failed sync, as durableDirectory does.
    let outcome: { row: View<T> | undefined; written: boolean };
    try {
      outcome = await this.durableQuiet(decided);
    } finally {
      if (announce) this.feed.announce();
    }
    const { row, written } = outcome;
    if (written) this.reader.committed(this.feed.store, id, row);
    // Read again as committed: a later commit by another thread, already read in by the change feed,
    // is not undone here.
    if (written || (row !== undefined) !== this.rows.has(id)) this.refresh(id);
    return row;
  }

  /**
   * Reads a row again as committed, for a copy of the directory that another thread writes (the
   * change feed named it): the row it holds, and the row it holds now (undefined: removed).
   */
  refresh(id: string): { before: View<T> | undefined; after: View<T> | undefined } {
    const before = this.rows.get(id);
    // A write of this thread's under way: its row stands (its commit is what the store will hold).
    if (before && this.replaced.has(before)) return { before: before as View<T>, after: before as View<T> };
    const after = this.reader.get<T>(this.feed.store, id);
    if (after) this.rows.set(id, after);
    else this.rows.delete(id);
    return { before: before as View<T> | undefined, after: after as View<T> | undefined };
  }

  /** Every id this copy holds or the store holds: what a copy that lost track of the change feed reads again. */
  ids(): Set<string> {
    const ids = new Set(this.rows.keys());
    for (const id of this.reader.ids(this.feed.store)) ids.add(id);
    return ids;
  }

  /** Stages a row into a batch: visible through the batch only, until the batch commits. */
  stage(row: T, batch: WriteBatch): void {
    batch.put(this, row.id, row);
  }

  /** Stages the row's removal into a batch: gone through the batch at once, for everybody once the batch commits. */
  stageRemoval(id: string, batch: WriteBatch): void {
    batch.put(this, id, null);
  }

  /** Removes a row; gone at once, and back if the write fails (unless the id was written again). */
  remove(id: string, options?: { keys?: KeyChanges; by?: Editor | undefined }): Promise<boolean> {
    const previous = this.rows.get(id);
    this.rows.delete(id);
    const write = this.feed.writes.commit({ rows: [{ store: this.feed.store, id, value: null, base: previous }], keys: options?.keys, by: options?.by }).then(() => true);
    return this.durable(write).then(
      (done) => {
        this.reader.committed(this.feed.store, id, undefined);
        return done;
      },
      (error: unknown) => {
        if (previous && !this.rows.has(id)) this.rows.set(id, previous);
        throw error;
      },
    );
  }

  // ---- BatchTarget: used by WriteBatch only ----

  current(id: string): unknown {
    return this.rows.get(id);
  }

  applyCommitted(id: string, value: unknown, base: unknown): void {
    // null: a staged removal (stageRemoval).
    this.reader.committed(this.feed.store, id, value ?? undefined);
    if (this.rows.get(id) !== base) return;
    if (value === null) this.rows.delete(id);
    else this.rows.set(id, value as T);
  }

  claim(id: string): void {
    this.claims.set(id, (this.claims.get(id) ?? 0) + 1);
  }

  release(id: string): void {
    const n = (this.claims.get(id) ?? 0) - 1;
    if (n > 0) this.claims.set(id, n);
    else this.claims.delete(id);
  }
}
