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
   * once, for what leaves no trace after its use, like a pushed authorization request); `also`
   * removes what goes with it (its index entry) in the same transaction.
   * PostgreSQL: `DELETE … WHERE key = $1 RETURNING *`.
   */
  takeOnce<V>(db: Database<V, string>, key: string, also?: (found: V) => void): Promise<V | undefined>;
  /**
   * Raises the number under `key` to `value` (stores it when absent or lower); true when this call
   * changed it. For what only grows, like how long a revocation is kept.
   * PostgreSQL: `INSERT … ON CONFLICT (key) DO UPDATE SET v = $2 WHERE t.v < $2 RETURNING key`.
   */
  raiseTo(db: Database<number, string>, key: string, value: number): Promise<boolean>;
  /**
   * Stores `value` under `key` as the newest record of a group (a client's pushed requests, an
   * address's sign-ins), the group's oldest removed so that at most `group.max` stay: a burst
   * churns its own group and never refuses. `value(slot)` gives the record to store, knowing its
   * index key (its place in the group), which whoever removes the record removes with it
   * (leaveBoundedGroup in takeOnce's `also`). Resolves with that index key. Costs what leaves, not
   * the group's size.
   * PostgreSQL: one statement, a CTE deleting the group's oldest beyond `max - 1` (by sequence),
   * then the INSERT.
   */
  insertBounded<V>(db: Database<V, string>, key: string, value: (slot: string) => V, group: BoundedGroup): Promise<string>;
  /**
   * Holds the lease `name` for `holder` until `until` (ms): true when it was free, expired or
   * already this holder's (then extended); false while another holder has it. For periodic work
   * one process (later, one node) does at a time: sweeps.
   * PostgreSQL: `INSERT … ON CONFLICT (name) DO UPDATE SET holder = $2, until = $3 WHERE
   * leases.holder = $2 OR leases.until <= $now RETURNING name`.
   */
  lease(db: Database<Lease, string>, name: string, holder: string, now: number, until: number): Promise<boolean>;
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

/** Who holds a lease, and until when (ms). */
export interface Lease {
  holder: string;
  until: number;
}

/** A group of records with a bound (see Decisions.insertBounded): its index store, its name there, how many it keeps. */
export interface BoundedGroup {
  /** `<group>/<sequence>` → the record's key, oldest first; `<group>#` → the next sequence number and the group's size. */
  index: Database<any, string>;
  /** The group's name: no '/' in it. */
  name: string;
  max: number;
}

/** A bounded group's next sequence number and how many places it holds. */
interface GroupMeta {
  next: number;
  size: number;
}

/**
 * Removes a record's place from its bounded group (see Decisions.insertBounded): call it inside the
 * transaction that removes the record (takeOnce's `also`), so the group's size stays true.
 */
export function leaveBoundedGroup(index: Database<any, string>, slot: string): void {
  const name = slot.slice(0, slot.lastIndexOf('/'));
  void index.remove(slot);
  const meta = index.get(`${name}#`) as GroupMeta | undefined;
  if (meta) void index.put(`${name}#`, { ...meta, size: Math.max(0, meta.size - 1) } satisfies GroupMeta);
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
  takeOnce(db, key, also) {
    return db.transaction(() => {
      const found = db.get(key);
      if (found !== undefined) {
        void db.remove(key);
        also?.(found);
      }
      return found;
    });
  },
  insertBounded(db, key, value, group) {
    const range = { start: `${group.name}/`, end: `${group.name}/\uffff` };
    return db.transaction(() => {
      // The group's next sequence number and size sit beside its places (`<name>#` sorts before
      // `<name>/`), so an insert reads only what leaves: the oldest places, when the group is full.
      const meta = (group.index.get(`${group.name}#`) as GroupMeta | undefined) ?? { next: 0, size: 0 };
      let size = meta.size;
      if (size >= group.max) {
        // Read without `limit` and left early: a range with `limit`, or one after getCount, fails inside an lmdb-js write transaction.
        for (const { key: slot, value: member } of group.index.getRange(range)) {
          if (size < group.max) break;
          void group.index.remove(slot);
          void db.remove(member);
          size--;
        }
      }
      const slot = `${group.name}/${String(meta.next).padStart(12, '0')}`;
      void group.index.put(`${group.name}#`, { next: meta.next + 1, size: size + 1 } satisfies GroupMeta);
      void group.index.put(slot, key);
      void db.put(key, value(slot));
      return slot;
    });
  },
  lease(db, name, holder, now, until) {
    return db.transaction(() => {
      const current = db.get(name);
      if (current && current.holder !== holder && current.until > now) return false;
      void db.put(name, { holder, until });
      return true;
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
