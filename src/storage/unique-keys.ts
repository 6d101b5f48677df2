import type { Database } from 'lmdb';

/**
 * A unique key of the directory: a value that names one record in the instance (an org's name or
 * domain, a user name in an org, a resource URI, a client id, an app's name in its project, a
 * person's grant on a project), held by that record (`owner`, its id). `taken()` is the refusal,
 * in the caller's words, when another record holds it.
 */
export interface UniqueKey {
  readonly key: string;
  readonly owner: string;
  readonly taken: () => Error;
}

/** The meta key that says which kinds of keys the store holds for every record (a data dir from before gets them once, at start). */
export const UNIQUE_KEYS_BUILT = 'uniqueKeysBuilt';
/** The kinds of keys held now: 1 names, domains, resource URIs, grants, client ids, app names; 2 registration places. */
export const UNIQUE_KEYS_VERSION = 2;

/**
 * The directory's unique keys, held in the store beside the records, taken and freed in the write
 * transaction that writes them (WriteBatch): two threads (later, two nodes) adding the same name at
 * once cannot both succeed, whatever their copies of the directory knew. The copies' own lookups
 * only answer early. PostgreSQL: a table `(key PRIMARY KEY, owner)`, an `INSERT … ON CONFLICT
 * (key) DO NOTHING RETURNING` (or the records' own unique indexes) in the statement's transaction.
 */
export class UniqueKeys {
  constructor(private readonly db: Database<string, string>) {}

  /** Inside a write transaction: `unique.owner` holds the key from now on; throws `unique.taken()` when another owner holds it. */
  takeIn(unique: UniqueKey): void {
    const holder = this.db.get(unique.key);
    if (holder !== undefined && holder !== unique.owner) throw unique.taken();
    if (holder === undefined) void this.db.put(unique.key, unique.owner);
  }

  /** Inside a write transaction: the key is free again, if `owner` held it. */
  freeIn(key: string, owner: string): void {
    if (this.db.get(key) === owner) void this.db.remove(key);
  }

  /** Inside a write transaction: the keys under `prefix` that `owner` holds are free again. */
  freeOwnedIn(prefix: string, owner: string): void {
    for (const { key, value } of this.db.getRange({ start: prefix, end: `${prefix}\uffff` })) if (value === owner) void this.db.remove(key);
  }

  /** The keys under `prefix` held as committed (a project's registration places). */
  heldUnder(prefix: string): Set<string> {
    const held = new Set<string>();
    for (const { key } of this.db.getRange({ start: prefix, end: `${prefix}\uffff` })) held.add(key);
    return held;
  }

  /** Who holds the key as committed. */
  holder(key: string): string | undefined {
    return this.db.get(key);
  }

  /** Takes every key of the records as they are (a data dir written before the store held them), in one transaction. */
  build(keys: Iterable<{ key: string; owner: string }>): Promise<void> {
    return this.db.transaction(() => {
      for (const { key, owner } of keys) if (this.db.get(key) === undefined) void this.db.put(key, owner);
    });
  }
}
