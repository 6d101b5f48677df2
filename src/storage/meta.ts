import type { Editor } from '../model/activity.js';
import { UNIQUE_KEYS_BUILT, UNIQUE_KEYS_VERSION } from './unique-keys.js';
import type { View } from '../util/readonly.js';
import type { DirectoryReader } from './directory-reader.js';
import type { DirectoryWrites } from './directory-writes.js';

/**
 * The `meta` store and its only writer (a storage-level owner, so opening the data dir can check
 * its schema version): the data dir's schema version, the master key check,
 * the instance record (default org, management project, admin user) and the instance-wide
 * settings records. Others read and change these through its methods. A value is visible at once
 * and resolves when durable; if its write fails, the value is taken back (unless it was written
 * again meanwhile).
 */
export class MetaStore {
  private readonly values = new Map<string, unknown>();

  constructor(
    /** How the `meta` store is read (a load, and again when the change feed names it). */
    private readonly reader: DirectoryReader,
    /** How its changes are committed and logged for the copies of the directory (the instance record and settings are part of it). */
    private readonly writes: DirectoryWrites,
    private readonly durable: <R>(write: Promise<R>) => Promise<R> = (write) => write,
  ) {
    this.reload();
  }

  /** Reads the store as committed now, from the store itself (after a write refused because another copy wrote first). */
  reread(): Promise<void> {
    return this.reader.reload(['meta']);
  }

  /** Reads the store as committed (an HTTP acceptor thread's copy, after the main thread changed it). */
  reload(): void {
    this.values.clear();
    for (const key of this.reader.ids('meta')) this.values.set(key, this.reader.get('meta', key));
  }

  // ---- opening the data dir (synchronous, before anything else runs) ----

  /** The schema version the data dir was written with (the store sets it when it opens a new one). */
  schemaVersion(): number | undefined {
    return this.values.get('schemaVersion') as number | undefined;
  }

  /** The master key check (a known text sealed with the key), if the data dir has one. */
  masterKeyCheck(): Uint8Array | undefined {
    return this.values.get('masterKeyCheck') as Uint8Array | undefined;
  }

  /**
   * Stores the master key check of a new data dir, durably; one that exists is never replaced (the
   * store refuses it, also when another node sealed one first).
   */
  async sealMasterKeyCheck(sealed: Uint8Array): Promise<void> {
    if (this.values.has('masterKeyCheck')) throw new Error('the data dir already has a master key check');
    await this.durable(this.writes.commit({ rows: [{ store: 'meta', id: 'masterKeyCheck', value: sealed, base: undefined }] }));
    this.values.set('masterKeyCheck', sealed);
  }

  // ---- the instance ----

  instance<T>(): View<T> | undefined {
    return this.values.get('instance') as View<T> | undefined;
  }

  /** Records the instance created at first start. */
  setInstance<T>(info: T): Promise<boolean> {
    return this.put('instance', info);
  }

  /** Whether the store holds the directory's unique keys (see UniqueKeys): a data dir from before gets them once, at start. */
  uniqueKeysBuilt(): boolean {
    return this.values.get(UNIQUE_KEYS_BUILT) === UNIQUE_KEYS_VERSION;
  }

  setUniqueKeysBuilt(): Promise<boolean> {
    return this.put(UNIQUE_KEYS_BUILT, UNIQUE_KEYS_VERSION);
  }

  // ---- instance settings (SettingsActor) ----

  features<T>(): View<T> | undefined {
    return this.values.get('features') as View<T> | undefined;
  }

  setFeatures<T>(features: T, by?: Editor): Promise<boolean> {
    return this.put('features', features, by);
  }

  securityPolicy<T>(): View<T> | undefined {
    return this.values.get('securityPolicy') as View<T> | undefined;
  }

  setSecurityPolicy<T>(policy: T, by?: Editor): Promise<boolean> {
    return this.put('securityPolicy', policy, by);
  }

  dynamicRegistration<T>(): View<T> | undefined {
    return this.values.get('dynamicRegistration') as View<T> | undefined;
  }

  setDynamicRegistration<T>(settings: T, by?: Editor): Promise<boolean> {
    return this.put('dynamicRegistration', settings, by);
  }

  /** An instance-wide record by name (SMTP configurations, …): kept here like the settings above. */
  record<T>(key: string): View<T> | undefined {
    return this.values.get(key) as View<T> | undefined;
  }

  setRecord<T>(key: string, value: T, by?: Editor): Promise<boolean> {
    return this.put(key, value, by);
  }

  /** `by`: who makes the change (the activity log's editor; Sesame itself when absent). */
  private put(key: string, value: unknown, by?: Editor): Promise<boolean> {
    const had = this.values.has(key);
    const previous = this.values.get(key);
    this.values.set(key, value);
    // A compare-and-set, as a directory table's put (Table.put): a record another thread wrote since
    // this copy read it refuses the write (WriteConflict), and its writer decides again.
    const write = this.writes.commit({ rows: [{ store: 'meta', id: key, value, base: had ? previous : undefined }], by }).then(() => true);
    return this.durable(write).catch((error: unknown) => {
      if (this.values.get(key) === value) {
        if (had) this.values.set(key, previous);
        else this.values.delete(key);
      }
      throw error;
    });
  }
}
