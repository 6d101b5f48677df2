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
  /**
   * Raises the number under `key` to `value` (stores it when absent or lower); true when this call
   * changed it. For what only grows, like how long a revocation is kept.
   * PostgreSQL: `INSERT … ON CONFLICT (key) DO UPDATE SET v = $2 WHERE t.v < $2 RETURNING key`.
   */
  raiseTo(db: Database<number, string>, key: string, value: number): Promise<boolean>;
  /**
   * Changes one record as it is when the change is made: `next(found)` gives its new form, `null`
   * to remove it, or undefined to leave it; `also(found, next)` writes what goes with it (index
   * entries) in the same transaction. Resolves with the record as left. For read-modify-write
   * state that several threads change (a session's apps, a consent's scopes), where a change made
   * from a stale read would undo another's.
   * PostgreSQL: `SELECT … FOR UPDATE` and the write in one transaction (or a version compare-and-set
   * retried on conflict).
   */
  update<V>(db: Database<V, string>, key: string, next: (found: V | undefined) => V | null | undefined, also?: (found: V | undefined, next: V | null) => void): Promise<V | undefined>;
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
  update(db, key, next, also) {
    return db.transaction(() => {
      const found = db.get(key);
      const changed = next(found);
      if (changed === undefined) return found;
      if (changed === null) void db.remove(key);
      else void db.put(key, changed);
      also?.(found, changed);
      return changed ?? undefined;
    });
  },
  raiseTo(db, key, value) {
    return db.transaction(() => {
      const found = db.get(key);
      if (found !== undefined && found >= value) return false;
      void db.put(key, value);
      return true;
    });
  },
};

/** Resolves once `decision` went this caller's way (true); rejects with DecidedElsewhere otherwise. */
export async function mustWin(decision: Promise<boolean>, what: string): Promise<void> {
  if (!(await decision)) throw new DecidedElsewhere(what);
}
