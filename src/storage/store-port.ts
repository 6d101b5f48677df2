import type { NewEvent } from '../model/activity.js';
import type { BoundedGroup, Lease } from './decisions.js';

/**
 * The store port: what Sesame asks of a store for the state every thread and every node shares
 * (tokens, codes, refresh families, sessions, sign-ins, replay guards, counters, leases, outboxes),
 * with two implementations: LMDB (`lmdb-store.ts`, one node, no database) and PostgreSQL
 * (`postgres/postgres-store.ts`, many nodes). Nothing here is held in one thread's memory; every
 * read goes to the store, every decision is made there.
 *
 * Records are grouped by kind (`RecordKind`): string keys (or binary ones, token digests), values
 * that msgpack encodes. A decision's callbacks (`claim`, `next`, `also`) are pure: they see the
 * record as stored and say what to write, and the store applies it only if the record is still the
 * one they saw (LMDB: inside its one write transaction; PostgreSQL: a compare-and-set on the row's
 * version, decided again when another node changed it first). They may run more than once.
 *
 * Promises resolve once the change is committed; `durable` adds what the durability mode asks
 * (LMDB `flush`: the sync too; PostgreSQL: a commit is durable as the server's
 * `synchronous_commit` makes it).
 */
export type RecordKey = string | Uint8Array;

/** A kind of record: its name in the store (an LMDB database, PostgreSQL's `kind` column). */
export interface RecordKind<V, K extends RecordKey = string> {
  readonly name: string;
  /** Binary keys (a token's SHA-256); strings otherwise. */
  readonly binaryKeys: K extends string ? false : true;
  /** Only for the type: the value type this kind holds. */
  readonly value?: V;
}

export function recordKind<V>(name: string): RecordKind<V, string> {
  return { name, binaryKeys: false };
}

export function binaryRecordKind<V>(name: string): RecordKind<V, Uint8Array> {
  return { name, binaryKeys: true };
}

/** One record asked about: its kind and key. */
export interface StoreRead {
  kind: RecordKind<any, any>;
  key: RecordKey;
}

/**
 * A write that goes with a decision, in the same commit: a record put (`value` null removes it), a
 * record's place taken out of its bounded group (see StorePort.insertBounded), which the store
 * reads and writes as it stands in that commit, or events of the activity log (model/activity.ts)
 * that describe the decision (a sign-in with its session).
 */
export type RecordWrite = { kind: RecordKind<any, any>; key: RecordKey; value: unknown } | { leaveGroup: RecordKind<any, string>; slot: string } | { activity: readonly NewEvent[] };

export interface StorePort {
  get<V, K extends RecordKey>(kind: RecordKind<V, K>, key: K): Promise<V | undefined>;
  /**
   * Whether each record is there, records of any kinds, in one look (on PostgreSQL one statement):
   * the checks a token's use makes (the token, and a revocation of it, its grant or its session).
   */
  present(reads: readonly StoreRead[]): Promise<boolean[]>;
  /** The records whose keys start with `prefix`, in key order, at most `limit`. */
  range<V>(kind: RecordKind<V, string>, prefix: string, limit?: number): Promise<{ key: string; value: V }[]>;
  put<V, K extends RecordKey>(kind: RecordKind<V, K>, key: K, value: V): Promise<void>;
  /** True when there was a record to remove. */
  remove<K extends RecordKey>(kind: RecordKind<any, K>, key: K): Promise<boolean>;
  /** Several writes in one commit (all or none). */
  write(writes: readonly RecordWrite[]): Promise<void>;

  /** Stores `value` unless the key is taken; true when this call stored it (a first use). */
  insertIfAbsent<V>(kind: RecordKind<V, string>, key: string, value: V): Promise<boolean>;
  /**
   * Claims a record once: `claim(record)` gives its claimed form, or undefined when it may not be
   * claimed (already claimed, expired). The record as found comes back either way, with whether
   * this call claimed it.
   */
  claimOnce<V>(kind: RecordKind<V, string>, key: string, claim: (record: V) => V | undefined): Promise<{ found: V | undefined; claimed: boolean }>;
  /** Removes the record and gives it back to one caller only; `also(found)` writes what goes with it, in the same commit. */
  takeOnce<V>(kind: RecordKind<V, string>, key: string, also?: (found: V) => readonly RecordWrite[]): Promise<V | undefined>;
  /** Raises the number under `key` to `value` (stored when absent or lower); true when this call changed it. */
  raiseTo(kind: RecordKind<number, string>, key: string, value: number): Promise<boolean>;
  /**
   * Stores `value(slot)` under `key` as the newest of a group, removing the group's oldest so at
   * most `group.max` stay (see Decisions.insertBounded); resolves with the record's slot.
   */
  insertBounded<V>(kind: RecordKind<V, string>, key: string, value: (slot: string) => V, group: StoreBoundedGroup): Promise<string>;
  /** Holds the lease `name` for `holder` until `until` (ms): true when it was free, expired or already this holder's. */
  lease(kind: RecordKind<Lease, string>, name: string, holder: string, now: number, until: number): Promise<boolean>;
  /**
   * Changes one record as it is when the change is made: `next(found)` gives its new form, null to
   * remove it, undefined to leave it; `also(found, next)` gives the writes that go with it. Resolves
   * with the record as left.
   */
  update<V>(
    kind: RecordKind<V, string>,
    key: string,
    next: (found: V | undefined) => V | null | undefined,
    also?: (found: V | undefined, next: V | null) => readonly RecordWrite[],
  ): Promise<V | undefined>;

  /** How many records of a kind there are, or of those whose keys lie in [start, end). */
  count(kind: RecordKind<any, string>, range?: KeyRange): Promise<number>;
  /**
   * Writes `writes` in one commit only if every `absent` record is absent and fewer than
   * `atMost.max` records of `atMost.kind` lie in its key range: 'taken' or 'full' otherwise, and
   * nothing is written. Guarded inserts with the same `atMost` range take turns.
   */
  insertGuarded(
    guard: { absent?: readonly { kind: RecordKind<any, string>; key: string }[]; atMost?: { kind: RecordKind<any, string>; range: KeyRange; max: number } },
    writes: readonly RecordWrite[],
  ): Promise<'written' | 'taken' | 'full'>;
  /**
   * Removes every record of a kind for which `expired(record)` holds when it is removed (one renewed
   * meanwhile stays), with `also(key, record)`'s writes in the same commit; a chunk at a time, other
   * work running between chunks. Resolves with how many it removed.
   */
  sweep<V, K extends RecordKey>(kind: RecordKind<V, K>, expired: (record: V) => boolean, also?: (key: K, record: V) => readonly RecordWrite[]): Promise<number>;

  /** Resolves once `write` is committed and as durable as the store's durability mode makes it. */
  durable<T>(write: Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Keys from `start` (included) to `end` (excluded), in the store's byte order. */
export interface KeyRange {
  start: string;
  end: string;
}

/** A bounded group (see StorePort.insertBounded): the kind its index lives in, its name, how many it keeps. */
export interface StoreBoundedGroup extends Omit<BoundedGroup, 'index'> {
  index: RecordKind<any, string>;
}

/**
 * The kinds of change the feed carries: the logout outbox, the mail outbox, and the directory (on PostgreSQL, every
 * directory commit notifies; on LMDB the directory has its own counter, Storage.directoryVersion).
 */
export const FEED_KINDS = ['outbox', 'directory', 'mail'] as const;
export type FeedKind = (typeof FEED_KINDS)[number];

/**
 * The store's change feed: a counter per kind of record, moved after a change of that kind is
 * durable, that a waiter can wait on. The back-channel logout outbox is fed by whichever thread
 * (or node) ends a session, and drained by one deliverer, woken by the feed. Within a process
 * (LMDB) a shared counter every thread reads; across nodes (PostgreSQL) NOTIFY and LISTEN
 * (`postgres/change-feed.ts`). A feed may also move without a change (a lost connection): a waiter
 * then looks at the store again and finds nothing new, which is harmless.
 */
export interface ChangeFeed {
  /** How many changes of this kind were announced so far (as this process counts them). */
  version(kind: FeedKind): number;
  /** Says a change of this kind is durable: every waiter, on every thread or node, wakes. */
  announce(kind: FeedKind): void;
  /**
   * Resolves with the version once it differs from `seen`, or after `timeoutMs` with it as it is
   * then (so a waiter can stop; a pending wait does not keep the process alive).
   */
  after(kind: FeedKind, seen: number, timeoutMs: number): Promise<number>;
}
