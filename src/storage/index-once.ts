import type { Database } from 'lmdb';

/**
 * Builds an index store from its records once: on the first start that finds the index empty
 * while there are records (a data dir from before the index). `keysOf(record)` gives the record's
 * index entries. Synchronous, before the actor serves.
 */
export function buildIndexOnce<V>(records: Database<V, string>, index: Database<any, string>, keysOf: (record: V) => [key: string, value: unknown][]): void {
  if (index.getKeysCount({ limit: 1 }) > 0 || records.getKeysCount({ limit: 1 }) === 0) return;
  index.transactionSync(() => {
    for (const { value } of records.getRange()) for (const [key, entry] of keysOf(value)) void index.put(key, entry);
  });
}
