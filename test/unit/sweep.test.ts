import { describe, expect, it } from 'vitest';
import { sweepExpired } from '../../src/storage/sweep.js';
import { tempStorageEach } from '../helpers/temp-storage.js';

/** Sweeping a store: all of it, a chunk per event-loop turn, a record removed only if still expired when removed. */
const storage = tempStorageEach('sweep');

describe('sweepExpired', () => {
  it('walks the whole store in chunks and removes what is expired', async () => {
    const db = storage().stores.revokedGrants;
    await db.transaction(() => {
      for (let i = 0; i < 4500; i++) void db.put(`g${String(i).padStart(5, '0')}`, i);
    });
    expect(await sweepExpired(db, (until: number) => until % 2 === 0)).toBe(2250);
    expect(db.getCount()).toBe(2250);
    expect(db.get('g04499')).toBe(4499);
    expect(db.get('g04498')).toBeUndefined();
  });

  it('keeps a record renewed between the scan and its removal', async () => {
    const db = storage().stores.revokedGrants;
    await db.put('g1', 1);
    // Expired when scanned, no longer when the removal looks again (another thread extended it).
    let looks = 0;
    expect(await sweepExpired(db, () => looks++ === 0)).toBe(0);
    expect(db.get('g1')).toBe(1);
  });
});
