import type { Database } from 'lmdb';
import type { LmdbActivityLog } from './activity-log.js';
import { leaveBoundedGroup, lmdbDecisions } from './decisions.js';
import type { KeyRange, RecordKey, RecordKind, RecordWrite, StorePort, StoreRead } from './store-port.js';
import { sweepExpired } from './sweep.js';

/**
 * The store port on LMDB: every kind of record is a named database of the environment, every
 * decision one write transaction (`lmdbDecisions`), the writes a decision carries (`also`) applied
 * inside it. Reads resolve at once (LMDB reads are synchronous memory-map lookups) and see every
 * commit made before them, by any thread (the read snapshot is renewed when another committed).
 */
export class LmdbStore implements StorePort {
  constructor(
    /** The database of a kind (the storage opens them; binary-keyed kinds with binary key encoding). */
    private readonly dbOf: (kind: RecordKind<any, any>) => Database<any, any>,
    private readonly durableWrite: <T>(write: Promise<T>) => Promise<T>,
    /** Renews this thread's read snapshot when another thread committed since (Storage.freshReads). */
    private readonly freshReads: () => void,
    /** Where the events a decision carries are written (RecordWrite `activity`). */
    private readonly activity: LmdbActivityLog,
  ) {}

  get<V, K extends RecordKey>(kind: RecordKind<V, K>, key: K): Promise<V | undefined> {
    this.freshReads();
    return Promise.resolve(this.dbOf(kind).get(key) as V | undefined);
  }

  present(reads: readonly StoreRead[]): Promise<boolean[]> {
    this.freshReads();
    // doesExist: no value decoded.
    return Promise.resolve(reads.map((read) => this.dbOf(read.kind).doesExist(read.key as any)));
  }

  range<V>(kind: RecordKind<V, string>, prefix: string, limit?: number): Promise<{ key: string; value: V }[]> {
    this.freshReads();
    const found: { key: string; value: V }[] = [];
    for (const { key, value } of this.dbOf(kind).getRange({ start: prefix, end: `${prefix}\uffff`, ...(limit === undefined ? {} : { limit }) })) {
      found.push({ key: key as string, value: value as V });
    }
    return Promise.resolve(found);
  }

  async put<V, K extends RecordKey>(kind: RecordKind<V, K>, key: K, value: V): Promise<void> {
    await this.dbOf(kind).put(key, value);
  }

  remove<K extends RecordKey>(kind: RecordKind<any, K>, key: K): Promise<boolean> {
    // lmdb-js's remove resolves true whether or not there was a record: read inside the transaction.
    const db = this.dbOf(kind);
    return db.transaction(() => db.get(key) !== undefined && (void db.remove(key), true));
  }

  async write(writes: readonly RecordWrite[]): Promise<void> {
    if (writes.length === 0) return;
    await this.dbOfWrite(writes[0]!).transaction(() => this.apply(writes));
  }

  insertIfAbsent<V>(kind: RecordKind<V, string>, key: string, value: V): Promise<boolean> {
    return lmdbDecisions.insertIfAbsent(this.dbOf(kind), key, value);
  }

  claimOnce<V>(kind: RecordKind<V, string>, key: string, claim: (record: V) => V | undefined): Promise<{ found: V | undefined; claimed: boolean }> {
    return lmdbDecisions.claimOnce(this.dbOf(kind), key, claim);
  }

  takeOnce<V>(kind: RecordKind<V, string>, key: string, also?: (found: V) => readonly RecordWrite[]): Promise<V | undefined> {
    return lmdbDecisions.takeOnce(this.dbOf(kind), key, also && ((found: V) => this.apply(also(found))));
  }

  raiseTo(kind: RecordKind<number, string>, key: string, value: number): Promise<boolean> {
    return lmdbDecisions.raiseTo(this.dbOf(kind), key, value);
  }

  insertBounded<V>(kind: RecordKind<V, string>, key: string, value: (slot: string) => V, group: { index: RecordKind<any, string>; name: string; max: number }): Promise<string> {
    return lmdbDecisions.insertBounded(this.dbOf(kind), key, value, { ...group, index: this.dbOf(group.index) });
  }

  lease(kind: RecordKind<{ holder: string; until: number }, string>, name: string, holder: string, now: number, until: number): Promise<boolean> {
    return lmdbDecisions.lease(this.dbOf(kind), name, holder, now, until);
  }

  update<V>(
    kind: RecordKind<V, string>,
    key: string,
    next: (found: V | undefined) => V | null | undefined,
    also?: (found: V | undefined, next: V | null) => readonly RecordWrite[],
  ): Promise<V | undefined> {
    return lmdbDecisions.update(this.dbOf(kind), key, next, also && ((found: V | undefined, changed: V | null) => this.apply(also(found, changed))));
  }

  count(kind: RecordKind<any, string>, range?: KeyRange): Promise<number> {
    this.freshReads();
    return Promise.resolve(this.dbOf(kind).getCount(range && { start: range.start, end: range.end }));
  }

  insertGuarded(
    guard: { absent?: readonly { kind: RecordKind<any, string>; key: string }[]; atMost?: { kind: RecordKind<any, string>; range: KeyRange; max: number } },
    writes: readonly RecordWrite[],
  ): Promise<'written' | 'taken' | 'full'> {
    const { absent = [], atMost } = guard;
    const kind = atMost?.kind ?? absent[0]?.kind;
    return (kind ? this.dbOf(kind) : this.dbOfWrite(writes[0]!)).transaction(() => {
      // Counted natively; no range is read after it in this transaction (lmdb-js).
      if (atMost && this.dbOf(atMost.kind).getCount({ start: atMost.range.start, end: atMost.range.end }) >= atMost.max) return 'full' as const;
      if (absent.some(({ kind, key }) => this.dbOf(kind).get(key) !== undefined)) return 'taken' as const;
      this.apply(writes);
      return 'written' as const;
    });
  }

  sweep<V, K extends RecordKey>(kind: RecordKind<V, K>, expired: (record: V) => boolean, also?: (key: K, record: V) => readonly RecordWrite[]): Promise<number> {
    return sweepExpired(this.dbOf(kind) as Database<V, any>, expired, also && ((key: K, record: V) => this.apply(also(key, record))));
  }

  durable<T>(write: Promise<T>): Promise<T> {
    return this.durableWrite(write);
  }

  /** The environment is the storage's to close. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  /** Applies writes inside the current write transaction. */
  private apply(writes: readonly RecordWrite[]): void {
    for (const write of writes) {
      if ('activity' in write) this.activity.append(write.activity);
      else if ('leaveGroup' in write) leaveBoundedGroup(this.dbOf(write.leaveGroup), write.slot);
      else if (write.value === null) void this.dbOf(write.kind).remove(write.key);
      else void this.dbOf(write.kind).put(write.key, write.value);
    }
  }

  /** A database of the environment to run a write transaction on (any one: LMDB has one writer). */
  private dbOfWrite(write: RecordWrite): Database<any, any> {
    const kind = kindOf(write);
    return kind ? this.dbOf(kind) : this.activity.database;
  }
}

function kindOf(write: RecordWrite): RecordKind<any, any> | undefined {
  return 'activity' in write ? undefined : 'leaveGroup' in write ? write.leaveGroup : write.kind;
}
