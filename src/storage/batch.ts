import type { Database } from 'lmdb';
import type { Storage } from './db.js';

/**
 * Writes that commit together, in one LMDB transaction (e.g. one organization of an import).
 * Actors stage rows into a batch: the rows are in their memory at once (as with Table.put), the
 * batch's commit() writes them atomically, and rollback() takes the memory changes back when the
 * batch is abandoned or its transaction fails.
 */
interface StagedWrite {
  db: Database<any, string>;
  key: string;
  value: unknown;
}

export class WriteBatch {
  private writes: StagedWrite[] = [];
  private undos: (() => void)[] = [];

  get size(): number {
    return this.writes.length;
  }

  /** Adds a write; `undo` restores the memory state it replaced. */
  put(db: Database<any, string>, key: string, value: unknown, undo: () => void): void {
    this.writes.push({ db, key, value });
    this.undos.push(undo);
  }

  /** Registers memory-only bookkeeping (an index entry) to take back on rollback. */
  onRollback(undo: () => void): void {
    this.undos.push(undo);
  }

  /** Writes everything in one transaction; on failure the memory changes are rolled back. */
  async commit(storage: Pick<Storage, 'root' | 'durable'>): Promise<void> {
    const writes = this.writes;
    if (writes.length === 0) {
      this.undos = [];
      return;
    }
    try {
      await storage.durable(
        storage.root.transaction(() => {
          for (const w of writes) void w.db.put(w.key, w.value);
        }),
      );
    } catch (error) {
      this.rollback();
      throw error;
    }
    this.writes = [];
    this.undos = [];
  }

  /** Undoes the memory changes of every staged write, newest first, and empties the batch. */
  rollback(): void {
    for (let i = this.undos.length - 1; i >= 0; i--) this.undos[i]!();
    this.writes = [];
    this.undos = [];
  }
}
