import type { Database, Key } from 'lmdb';

/** Records read per event-loop turn while sweeping: other requests run between chunks. */
const CHUNK = 2000;

/**
 * Removes a store's expired records: the whole store, a chunk per event-loop turn, each chunk's
 * removals in one transaction that removes a record only if it is still expired then (one renewed
 * meanwhile, on any thread, stays: a refresh family used, a revocation extended). `also` removes
 * what goes with a record (its index entries) in the same transaction. Resolves with how many
 * records it removed.
 */
export async function sweepExpired<K extends Key, V>(db: Database<V, K>, expired: (record: V) => boolean, also?: (key: K, record: V) => void): Promise<number> {
  let removed = 0;
  let cursor: K | undefined;
  for (;;) {
    const found: K[] = [];
    let seen = 0;
    let last: K | undefined;
    for (const { key, value } of db.getRange(cursor === undefined ? { limit: CHUNK } : { start: cursor, limit: CHUNK })) {
      seen++;
      last = key;
      if (expired(value)) found.push(key);
    }
    if (found.length > 0) {
      removed += await db.transaction(() => {
        let n = 0;
        for (const key of found) {
          const record = db.get(key);
          if (record === undefined || !expired(record)) continue;
          void db.remove(key);
          also?.(key, record);
          n++;
        }
        return n;
      });
    }
    if (seen < CHUNK || last === undefined) return removed;
    cursor = after(last);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The smallest key after `key` in LMDB's order. */
function after<K extends Key>(key: K): K {
  return (Buffer.isBuffer(key) ? Buffer.concat([key, Buffer.from([0])]) : `${String(key)}\u0000`) as K;
}
