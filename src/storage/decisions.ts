import type { Database } from 'lmdb';
import { DecidedElsewhere } from '../model/errors.js';

/**
 * The decisions a store makes for Sesame: the primitives behind single use, replay guards and
 * rotation, decided where every thread (and later every node) sees the same answer — never in one
 * thread's memory. Each is one write transaction in LMDB (whichever thread asks, LMDB's single
 * writer decides) and is shaped so PostgreSQL can make it one statement (noted on each). Callers pass
 * times in from the injected clock; a decision resolves once its write is committed (the caller
 * adds `Storage.durable` for the sync).
 */
export interface Decisions {
  /**
   * Stores `value` under `key` unless the key is taken; true when this call stored it (a first use).
   * PostgreSQL: `INSERT … ON CONFLICT DO NOTHING RETURNING key`.
   */
  insertIfAbsent<V>(db: Database<V, string>, key: string, value: V): Promise<boolean>;
  /**
   * Claims a record once: `claim(record)` gives the record's claimed form, or undefined when it may
   * not be claimed now (already claimed, expired). The record as found comes back either way, with
   * whether this call claimed it: a second claim sees the first's mark (a replay to answer).
   * PostgreSQL: `UPDATE … SET used_at = $now WHERE key = $1 AND used_at IS NULL AND exp > $now
   * RETURNING *`, and on no row a `SELECT` for the replay.
   */
  claimOnce<V>(db: Database<V, string>, key: string, claim: (record: V) => V | undefined): Promise<{ found: V | undefined; claimed: boolean }>;
  /**
   * Removes the record and gives it back, to one caller only: the others get undefined (consume
   * once, for what leaves no trace after its use, like a pushed authorization request).
   * PostgreSQL: `DELETE … WHERE key = $1 RETURNING *`.
   */
  takeOnce<V>(db: Database<V, string>, key: string): Promise<V | undefined>;
}

/** The decisions on LMDB: one write transaction each, its read inside it (no other writer in between). */
export const lmdbDecisions: Decisions = {
  insertIfAbsent(db, key, value) {
    return db.ifNoExists(key, () => void db.put(key, value));
  },
  claimOnce(db, key, claim) {
    return db.transaction(() => {
      const found = db.get(key);
      const claimed = found === undefined ? undefined : claim(found);
      if (claimed === undefined) return { found, claimed: false };
      void db.put(key, claimed);
      return { found, claimed: true };
    });
  },
  takeOnce(db, key) {
    return db.transaction(() => {
      const found = db.get(key);
      if (found !== undefined) void db.remove(key);
      return found;
    });
  },
};

/** Resolves once `decision` went this caller's way (true); rejects with DecidedElsewhere otherwise. */
export async function mustWin(decision: Promise<boolean>, what: string): Promise<void> {
  if (!(await decision)) throw new DecidedElsewhere(what);
}
