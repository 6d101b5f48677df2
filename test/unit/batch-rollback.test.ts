import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WriteBatch } from '../../src/storage/batch.js';
import type { Storage } from '../../src/storage/db.js';
import { openTempStorage, type TempStorage } from '../helpers/temp-storage.js';
import { Table } from '../../src/storage/table.js';

/**
 * WriteBatch rollback cases beyond test/unit/write-batch.test.ts, on real LMDB: sequences of
 * staged rows taken back, a batch after a commit or a failed one, and a write that LMDB itself
 * refuses in the middle of the batch's transaction (a key over its 1978-byte limit).
 */
interface Row {
  id: string;
  name: string;
}

let temp: TempStorage;
let storage: Storage;

beforeEach(() => {
  temp = openTempStorage('rollback');
  storage = temp.storage;
});

afterEach(async () => {
  await temp.close();
});

const rows = (table: Table<Row>) => Object.fromEntries([...table.values()].map((r) => [r.id, r.name]));
const disk = (db = storage.stores.orgs) => Object.fromEntries([...db.getRange()].map(({ key, value }) => [key, (value as Row).name]));
/** A row LMDB refuses when the transaction writes it: its key is over the maximum key size. */
const refused = (): Row => ({ id: 'k'.repeat(3000), name: 'refused' });

/** A storage whose transactions (plain or child) are refused. */
function failingStorage(message: string): Storage {
  const refuse = () => Promise.reject(new Error(message));
  return { directoryWrites: { commit: refuse }, durableDirectory: <T>(p: Promise<T>) => p } as unknown as Storage;
}

async function seeded(): Promise<Table<Row>> {
  const table = Table.ofDirectory<Row>(storage, 'orgs');
  await table.put({ id: 'a', name: 'a0' });
  await table.put({ id: 'b', name: 'b0' });
  return Table.ofDirectory<Row>(storage, 'orgs');
}

describe('WriteBatch rollback', () => {
  it.each<{ name: string; staged: Row[] }>([
    { name: 'one existing row changed', staged: [{ id: 'a', name: 'a1' }] },
    {
      name: 'one existing row changed three times',
      staged: [
        { id: 'a', name: 'a1' },
        { id: 'a', name: 'a2' },
        { id: 'a', name: 'a3' },
      ],
    },
    {
      name: 'a new row staged twice',
      staged: [
        { id: 'n', name: 'n1' },
        { id: 'n', name: 'n2' },
      ],
    },
    {
      name: 'new and existing rows interleaved',
      staged: [
        { id: 'n', name: 'n1' },
        { id: 'a', name: 'a1' },
        { id: 'b', name: 'b1' },
        { id: 'n', name: 'n2' },
        { id: 'a', name: 'a2' },
      ],
    },
  ])('$name: memory and disk as before', async ({ staged }) => {
    const table = await seeded();
    const batch = new WriteBatch();
    for (const row of staged) table.stage(row, batch);
    const last = Object.fromEntries(staged.map((r) => [r.id, r.name]));
    // Staged rows are the batch's own until it commits: seen through it, by nobody else.
    expect(rows(table)).toEqual({ a: 'a0', b: 'b0' });
    expect(Object.fromEntries([...table.valuesIn(batch)].map((r) => [r.id, r.name]))).toEqual({ a: 'a0', b: 'b0', ...last });
    batch.rollback();
    expect(rows(table)).toEqual({ a: 'a0', b: 'b0' });
    expect(batch.size).toBe(0);
    expect(disk()).toEqual({ a: 'a0', b: 'b0' });
  });

  it('a rollback after a successful commit takes nothing back', async () => {
    const table = await seeded();
    const index = new Set<string>();
    const batch = new WriteBatch();
    table.stage({ id: 'a', name: 'a1' }, batch);
    index.add('a1');
    batch.onRollback(() => index.delete('a1'));
    await batch.commit(storage);
    batch.rollback();
    expect(rows(table)).toEqual({ a: 'a1', b: 'b0' });
    expect(index.has('a1')).toBe(true);
    expect(disk()).toEqual({ a: 'a1', b: 'b0' });
  });

  it('a batch of only memory bookkeeping commits without a transaction and keeps it', async () => {
    const index = new Set(['x']);
    const batch = new WriteBatch();
    batch.onRollback(() => index.delete('x'));
    const failing = failingStorage('no transaction expected');
    await batch.commit(failing);
    batch.rollback();
    expect(index.has('x')).toBe(true);
  });

  it('after a failed commit the batch is empty: committing it again writes only what is staged anew', async () => {
    const table = await seeded();
    const batch = new WriteBatch();
    table.stage({ id: 'a', name: 'doomed' }, batch);
    const failing = failingStorage('disk full');
    await expect(batch.commit(failing)).rejects.toThrow('disk full');
    expect(batch.size).toBe(0);
    table.stage({ id: 'b', name: 'b1' }, batch);
    await batch.commit(storage);
    expect(rows(table)).toEqual({ a: 'a0', b: 'b1' });
    expect(disk()).toEqual({ a: 'a0', b: 'b1' });
  });

  /** A batch of two good writes and one LMDB refuses (its key is too long), committed: it must fail. */
  async function commitRefusedMidway(): Promise<Table<Row>> {
    const table = await seeded();
    const batch = new WriteBatch();
    table.stage({ id: 'a', name: 'a1' }, batch);
    table.stage({ id: 'n', name: 'n1' }, batch);
    table.stage(refused(), batch);
    await expect(batch.commit(storage)).rejects.toThrow(/key size/);
    return table;
  }

  it('a write LMDB refuses midway: the commit fails and memory is as before', async () => {
    const table = await commitRefusedMidway();
    expect(rows(table)).toEqual({ a: 'a0', b: 'b0' });
  });

  /*
   * lmdb-js 3.5's async `root.transaction(cb)` has no abort point for a plain callback: the writes
   * made before a throw would be committed although the commit rejects. The batch writes in a
   * child transaction, which aborts them (as src/actors/keys.ts does).
   */
  it('a write LMDB refuses midway leaves nothing on disk', async () => {
    await commitRefusedMidway();
    expect(disk()).toEqual({ a: 'a0', b: 'b0' });
  });

  it('a sync that fails after the commit: memory follows the disk, and the caller hears of it', async () => {
    const table = await seeded();
    const batch = new WriteBatch();
    table.stage({ id: 'a', name: 'a1' }, batch);
    table.stage({ id: 'n', name: 'n1' }, batch);
    const syncFails = { directoryWrites: storage.directoryWrites, durableDirectory: <T>(write: Promise<T>) => write.then(() => Promise.reject(new Error('fsync failed'))) } as unknown as Storage;
    await expect(batch.commit(syncFails)).rejects.toThrow('fsync failed');
    expect(disk()).toEqual({ a: 'a1', b: 'b0', n: 'n1' });
    expect(rows(table)).toEqual({ a: 'a1', b: 'b0', n: 'n1' });
  });
});
