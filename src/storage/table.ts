import type { Database } from 'lmdb';
import type { WriteBatch } from './batch.js';

/**
 * An actor's in-memory copy of one LMDB store. Reads never touch disk; writes update memory at
 * once and resolve when lmdb's batched transaction holding them is committed.
 */
export class Table<T extends { id: string }> {
  private readonly rows = new Map<string, T>();

  constructor(
    private readonly db: Database<T, string>,
    private readonly durable: <R>(write: Promise<R>) => Promise<R> = (write) => write,
  ) {
    for (const { value } of db.getRange()) this.rows.set(value.id, value);
  }

  get(id: string): T | undefined {
    return this.rows.get(id);
  }

  has(id: string): boolean {
    return this.rows.has(id);
  }

  values(): IterableIterator<T> {
    return this.rows.values();
  }

  get size(): number {
    return this.rows.size;
  }

  put(row: T): Promise<boolean> {
    this.rows.set(row.id, row);
    return this.durable(this.db.put(row.id, row));
  }

  /** Sets the row in memory now; the batch writes it (or takes it back) with the rest. */
  stage(row: T, batch: WriteBatch): void {
    const previous = this.rows.get(row.id);
    this.rows.set(row.id, row);
    batch.put(this.db, row.id, row, () => {
      if (previous) this.rows.set(row.id, previous);
      else this.rows.delete(row.id);
    });
  }

  remove(id: string): Promise<boolean> {
    this.rows.delete(id);
    return this.durable(this.db.remove(id));
  }
}
