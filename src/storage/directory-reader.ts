import type { Database } from 'lmdb';
import type { DirectoryChange, DirectoryStore } from './directory-log.js';
import type { UniqueKeys } from './unique-keys.js';

/**
 * How a copy of the directory reads the store: whole stores when it loads, single rows when the
 * change feed names them. Synchronous: on LMDB these are memory-map reads; a store over the network
 * (PostgreSQL) fetches what will be read before the copy reads it (a load, or the rows a feed entry
 * names), so the copies' own reads never wait.
 */
export interface DirectoryReader {
  get<T>(store: DirectoryStore, id: string): T | undefined;
  rows<T>(store: DirectoryStore): Iterable<T>;
  ids(store: DirectoryStore): Iterable<string>;
  /**
   * This copy's own commit of a row (undefined: removed): a reader that holds what it fetched takes
   * it in, unless it already holds a later version of the row (another node's, taken from the feed).
   */
  committed(store: DirectoryStore, id: string, row: unknown): void;
  /** Reads these stores again as committed now (after a write refused because another copy wrote first). */
  reload(stores: readonly DirectoryStore[]): Promise<void>;
  /** Reads these rows again as committed now (before the copy takes them in). */
  fetch(changes: readonly DirectoryChange[]): Promise<void>;
  /** The unique keys held under a prefix, as committed now (a project's registration places). */
  keysHeldUnder(prefix: string): Promise<Set<string>>;
}

/** The directory read from LMDB (each call reads this thread's snapshot: see Storage.freshReads). */
export class LmdbDirectoryReader implements DirectoryReader {
  constructor(
    private readonly dbOf: (store: DirectoryStore) => Database<any, string>,
    /** Renews this thread's read snapshot (LMDB readers keep theirs until renewed). */
    private readonly renewReads: () => void,
    private readonly uniqueKeys: Pick<UniqueKeys, 'heldUnder'>,
  ) {}

  get<T>(store: DirectoryStore, id: string): T | undefined {
    return this.dbOf(store).get(id) as T | undefined;
  }

  *rows<T>(store: DirectoryStore): Iterable<T> {
    for (const { value } of this.dbOf(store).getRange()) yield value as T;
  }

  *ids(store: DirectoryStore): Iterable<string> {
    for (const { key } of this.dbOf(store).getRange()) yield key;
  }

  /** LMDB reads the commit itself (this thread's snapshot includes its own commits). */
  committed(): void {}

  reload(): Promise<void> {
    this.renewReads();
    return Promise.resolve();
  }

  fetch(): Promise<void> {
    this.renewReads();
    return Promise.resolve();
  }

  keysHeldUnder(prefix: string): Promise<Set<string>> {
    return Promise.resolve(this.uniqueKeys.heldUnder(prefix));
  }
}
