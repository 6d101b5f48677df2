import type { Storage } from './db.js';
import { WriteConflict } from '../model/errors.js';
import type { DirectoryStore } from './directory-log.js';
import type { TableFeed } from './directory-writes.js';
import type { UniqueKey } from './unique-keys.js';
import type { Editor, EventDraft } from '../model/activity.js';

/** What a batch needs from a table (see Table): its store, its committed rows, and claims on ids. */
export interface BatchTarget {
  /** Where its writes are logged for the copies of the directory (see DirectoryLog), if anywhere. */
  readonly feed?: TableFeed | undefined;
  /** The row readers see now (committed, or put and awaiting its write). */
  current(key: string): unknown;
  /** Makes a committed row visible, unless the row is no longer `base` (a newer write wins). */
  applyCommitted(key: string, value: unknown, base: unknown): void;
  /** Marks an id as taken by a pending batch (uniqueness checks see it), or releases it. */
  claim(key: string): void;
  release(key: string): void;
}

interface Staged {
  value: unknown;
  /** The row this one replaces, as it was when first staged (undefined for a new row). */
  base: unknown;
}

/**
 * Rows a batch is writing now: its transaction passed the conflict check, but its rows become
 * visible only once durable. Another batch staged from the same base would pass the check too
 * (memory has not changed yet) and overwrite them: it is refused instead, as a conflict.
 */
const writing = new WeakMap<BatchTarget, Map<string, WriteBatch>>();

/**
 * Writes that commit together, in one LMDB transaction (e.g. one organization of an import).
 * Actors stage rows into a batch. Staged rows are pending: only code holding the batch sees them
 * (`Table.get(id, batch)`), everybody else keeps seeing the committed rows. commit() writes them
 * atomically and, once durable, makes them visible in the tables' memory; rollback() (or a failed
 * transaction) drops them. Neither ever overwrites a row another writer changed meanwhile.
 */
export class WriteBatch {
  private readonly pending = new Map<BatchTarget, Map<string, Staged>>();
  private count = 0;
  private undos: (() => void)[] = [];
  private commits: (() => void)[] = [];
  /** Unique keys the batch's records take, and ones they give up, in the store (see UniqueKeys). */
  private takes: UniqueKey[] = [];
  private frees: { key: string; owner: string }[] = [];
  /** Events besides those its rows stand for (an import's summary). */
  private events: EventDraft[] = [];
  constructor(
    /** Who makes the batch's changes (the activity log's editor); Sesame itself when absent. */
    readonly by?: Editor,
  ) {}

  /** Writes staged so far (a row staged twice counts twice). */
  get size(): number {
    return this.count;
  }

  /** Stages a row of `target`; a row staged again replaces the earlier value. */
  put(target: BatchTarget, key: string, value: unknown): void {
    let rows = this.pending.get(target);
    if (!rows) this.pending.set(target, (rows = new Map()));
    const prior = rows.get(key);
    if (prior) prior.value = value;
    else {
      rows.set(key, { value, base: target.current(key) });
      target.claim(key);
    }
    this.count++;
  }

  /** The row of `target` staged in this batch, if any. */
  staged(target: BatchTarget, key: string): unknown {
    return this.pending.get(target)?.get(key)?.value;
  }

  /** The rows of `target` staged in this batch, by key (null: staged for removal). */
  *stagedRows(target: BatchTarget): IterableIterator<[string, unknown]> {
    const rows = this.pending.get(target);
    if (rows) for (const [key, s] of rows) yield [key, s.value];
  }

  /** Registers memory-only bookkeeping (an index entry) to take back on rollback. */
  onRollback(undo: () => void): void {
    this.undos.push(undo);
  }

  /** A unique key a staged record takes in the store, with the commit (refused there when another record holds it). */
  takeKey(unique: UniqueKey): void {
    this.takes.push(unique);
  }

  /** A unique key a staged change gives up in the store, with the commit (a removed record's, a renamed one's old name). */
  freeKey(key: string, owner: string): void {
    this.frees.push({ key, owner });
  }

  /** An event the batch's commit writes besides those its rows stand for. */
  addEvent(event: EventDraft): void {
    this.events.push(event);
  }

  /** Registers memory-only bookkeeping to do once the batch is committed (after its rows are visible). */
  onCommit(done: () => void): void {
    this.commits.push(done);
  }

  /**
   * Writes everything in one transaction; on success the rows become visible, on failure nothing
   * was written and the batch is rolled back. A row changed by another writer since it was staged
   * fails the whole batch (FailedPrecondition, nothing written) rather than overwrite that change.
   */
  async commit(storage: Pick<Storage, 'durableDirectory' | 'directoryWrites'>): Promise<void> {
    if (this.count === 0 && this.takes.length === 0 && this.frees.length === 0 && this.events.length === 0) {
      for (const done of this.commits) done();
      this.clear();
      return;
    }
    const pending = [...this.pending];
    const takes = this.takes;
    const frees = this.frees;
    const events = this.events;
    const conflict = (): Error | undefined => {
      for (const [target, rows] of pending) {
        const others = writing.get(target);
        for (const [key, s] of rows) {
          const other = others?.get(key);
          if (target.current(key) !== s.base || (other !== undefined && other !== this)) {
            return new WriteConflict(key, `${key} was changed while it was staged; nothing was written`, target.feed?.store);
          }
        }
      }
      return undefined;
    };
    const markWriting = () => {
      for (const [target, rows] of pending) {
        let marks = writing.get(target);
        if (!marks) writing.set(target, (marks = new Map()));
        for (const key of rows.keys()) marks.set(key, this);
      }
    };
    const unmarkWriting = () => {
      for (const [target, rows] of pending) {
        const marks = writing.get(target);
        for (const key of rows.keys()) if (marks?.get(key) === this) marks.delete(key);
      }
    };
    const early = conflict();
    if (early) {
      this.rollback();
      throw early;
    }
    let written = false;
    try {
      // The store decides, whatever this thread's copy knew: a row another thread (or process, or
      // node) wrote since it was staged, or a unique key another record took, refuses the batch whole.
      const rows = pending.flatMap(([target, staged]) => [...staged].map(([id, s]) => ({ store: storeOf(target), id, value: s.value, base: s.base })));
      await storage.durableDirectory(
        storage.directoryWrites
          .commit({
            rows,
            keys: { take: takes, free: frees },
            by: this.by,
            events,
            inside: () => {
              // The store runs this later than asked (LMDB: when the transaction starts): writes
              // issued after commit() may be on disk by now. Checked again here, so the batch never
              // overwrites them.
              const late = conflict();
              if (late) throw late;
              markWriting();
            },
          })
          .then((result) => {
            written = true;
            return result;
          }),
      );
    } catch (error) {
      unmarkWriting();
      // Only the sync failed after the commit: the rows are on disk, so memory follows the disk
      // (the caller still hears that durability was not confirmed).
      if (written) this.apply(pending);
      else this.rollback();
      throw error;
    }
    unmarkWriting();
    this.apply(pending);
  }

  /** The committed rows become everybody's; the batch's on-commit bookkeeping runs. */
  private apply(pending: [BatchTarget, Map<string, Staged>][]): void {
    for (const [target, rows] of pending) {
      for (const [key, s] of rows) {
        target.applyCommitted(key, s.value, s.base);
        target.release(key);
      }
    }
    this.pending.clear();
    const commits = this.commits;
    this.clear();
    for (const done of commits) done();
  }

  /** Drops the staged rows and undoes the batch's bookkeeping, newest first; empties the batch. */
  rollback(): void {
    for (let i = this.undos.length - 1; i >= 0; i--) this.undos[i]!();
    for (const [target, rows] of this.pending) for (const key of rows.keys()) target.release(key);
    this.pending.clear();
    this.clear();
  }

  private clear(): void {
    this.undos = [];
    this.commits = [];
    this.takes = [];
    this.frees = [];
    this.events = [];
    this.count = 0;
  }
}

/** The directory store a batch writes a table's rows to (every table a batch writes is one of the directory's). */
function storeOf(target: BatchTarget): DirectoryStore {
  if (!target.feed) throw new Error('a write batch writes directory tables only (Table.ofDirectory)');
  return target.feed.store;
}
