import type pg from 'pg';
import { WriteConflict } from '../../model/errors.js';
import { clock } from '../../util/clock.js';
import type { DirectoryChange, DirectoryStore } from '../directory-log.js';
import { commitEvents, type DirectoryCommit, type DirectoryWrites } from '../directory-writes.js';
import type { Editor } from '../../model/activity.js';
import { appendEvents } from './activity.js';
import type { DirectoryReader } from '../directory-reader.js';
import type { DirectoryStorage } from '../db.js';
import { MetaStore } from '../meta.js';
import { FEED_CHANNEL, feedPayload } from './change-feed.js';
import { codec, sequenceColumn } from './codec.js';
import { storeError } from './pool.js';

/** Any constant: the advisory lock directory commits take in turn. */
const DIRECTORY_LOCK = 0x5e5a3e02;

type Queryable = Pick<pg.ClientBase, 'query'>;

/**
 * The directory on PostgreSQL (`sesame_directory`, `sesame_unique_keys`, `sesame_directory_changes`;
 * migrations.ts). A commit is one transaction: each row written only if it is still at the version
 * its writer read (`UPDATE … WHERE sequence IS NOT DISTINCT FROM $read`, an insert only where none
 * is), the unique keys taken (`INSERT … ON CONFLICT`) and freed, each row logged in the change feed,
 * and a NOTIFY the other nodes hear once it commits. Directory commits take turns under one
 * advisory lock, so the feed's numbers follow commit order and a node that reads "after n" never
 * misses an entry committed later under a lower number. Directory writes are rare (administration,
 * a sign-in's failure count), so the turns cost nothing that matters.
 */
export class PostgresDirectory implements DirectoryWrites {
  constructor(
    private readonly pool: pg.Pool,
    /** Told the change feed's last number of each commit, once committed (the threads of a node read their own writes: see PostgresNode). */
    private readonly onCommitted: (through: number) => void = () => undefined,
  ) {}

  async commit({ rows, keys, inside, by, events }: DirectoryCommit): Promise<void> {
    let through = 0;
    await this.inTurn(async (client) => {
      inside?.();
      for (const { store, id, value, base } of rows) {
        if (!(await this.writeIfAt(client, store, id, value, base))) throw new WriteConflict(id, undefined, store);
      }
      for (const { key, owner } of keys?.free ?? []) await client.query('DELETE FROM sesame_unique_keys WHERE key = $1 AND owner = $2', [key, owner]);
      for (const { prefix, owner } of keys?.freeOwned ?? []) {
        await client.query('DELETE FROM sesame_unique_keys WHERE starts_with(key, $1) AND owner = $2', [prefix, owner]);
      }
      for (const unique of keys?.take ?? []) {
        // Taken, or already this owner's: a row comes back; another owner's: none.
        const { rowCount } = await client.query(
          `INSERT INTO sesame_unique_keys (key, owner) VALUES ($1, $2)
           ON CONFLICT (key) DO UPDATE SET owner = EXCLUDED.owner WHERE sesame_unique_keys.owner = EXCLUDED.owner`,
          [unique.key, unique.owner],
        );
        if (rowCount !== 1) throw unique.taken();
      }
      through = await this.logged(
        client,
        rows.map(({ store, id }) => ({ store, id })),
      );
      // Each row was written only if still at the version its writer read (`base`): what it changed from.
      await appendEvents(
        client,
        commitEvents(rows, (i) => rows[i]!.base, { by, events }),
      );
    });
    if (through > 0) this.onCommitted(through);
  }

  async change<T>(store: DirectoryStore, id: string, next: (stored: T | undefined) => T | undefined, by?: Editor): Promise<{ row: T | undefined; written: boolean }> {
    let outcome: { row: T | undefined; written: boolean } = { row: undefined, written: false };
    let through = 0;
    await this.inTurn(async (client) => {
      // Under the directory's lock: nothing else writes a directory row until this commits.
      const stored = await this.read(client, store, id);
      const row = next(stored as T | undefined);
      if (row === undefined) {
        outcome = { row: stored as T | undefined, written: false };
        return;
      }
      await this.upsert(client, store, id, row);
      through = await this.logged(client, [{ store, id }]);
      await appendEvents(
        client,
        commitEvents([{ store, id, value: row }], () => stored, { by }),
      );
      outcome = { row, written: true };
    });
    if (through > 0) this.onCommitted(through);
    return outcome;
  }

  /** Every row of a store, by id (what a copy loads). */
  async entries(store: DirectoryStore): Promise<{ id: string; value: unknown }[]> {
    const { rows } = await this.pool.query<{ id: string; value: Buffer }>('SELECT id, value FROM sesame_directory WHERE store = $1 ORDER BY id', [store]);
    return rows.map((row) => ({ id: row.id, value: codec.unpack(row.value) }));
  }

  /** Rows as stored now, by store and id (what a copy takes in for the feed's entries); absent ones are undefined. */
  async current(changes: readonly DirectoryChange[]): Promise<Map<string, unknown>> {
    const found = new Map<string, unknown>();
    if (changes.length === 0) return found;
    const { rows } = await this.pool.query<{ store: string; id: string; value: Buffer }>(
      'SELECT d.store, d.id, d.value FROM sesame_directory d JOIN unnest($1::text[], $2::text[]) AS c(store, id) ON d.store = c.store AND d.id = c.id',
      [changes.map((c) => c.store), changes.map((c) => c.id)],
    );
    for (const row of rows) found.set(`${row.store}\u0000${row.id}`, codec.unpack(row.value));
    return found;
  }

  /** The newest feed number (or the last pruned), 0 for none: a copy loaded now takes what comes after. */
  async last(): Promise<number> {
    const { rows } = await this.pool.query<{ last: string }>('SELECT greatest((SELECT max(seq) FROM sesame_directory_changes), (SELECT through FROM sesame_directory_pruned)) AS last');
    return Number(rows[0]!.last);
  }

  /** The feed after `after`, up to `limit` entries; undefined when pruned past it or more are waiting (the copy loads whole). */
  async since(after: number, limit: number): Promise<{ changes: DirectoryChange[]; last: number } | undefined> {
    // One round trip (every thread of every node asks this each second): how far the feed was
    // pruned, beside the entries after `after` (none: one row with the pruned mark only).
    const { rows } = await this.pool.query<{ through: string; seq: string | null; store: DirectoryStore | null; id: string | null }>(
      `SELECT p.through, c.seq, c.store, c.id FROM sesame_directory_pruned p
       LEFT JOIN LATERAL (SELECT seq, store, id FROM sesame_directory_changes WHERE seq > $1 ORDER BY seq LIMIT $2) c ON true
       ORDER BY c.seq`,
      [after, limit + 1],
    );
    if (after < Number(rows[0]!.through)) return undefined;
    const entries = rows.filter((row) => row.seq !== null);
    if (entries.length > limit) return undefined;
    return { changes: entries.map(({ store, id }) => ({ store: store!, id: id! })), last: entries.length > 0 ? Number(entries.at(-1)!.seq) : after };
  }

  async buildKeys(keys: Iterable<{ key: string; owner: string }>): Promise<void> {
    const all = [...keys];
    if (all.length === 0) return;
    await this.pool.query('INSERT INTO sesame_unique_keys (key, owner) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (key) DO NOTHING', [all.map((k) => k.key), all.map((k) => k.owner)]);
  }

  /** Removes feed entries written before `before` (ms); resolves with how many went. */
  async pruneFeed(before: number): Promise<number> {
    let removed = 0;
    await this.inTurn(async (client) => {
      const { rows } = await client.query<{ n: string; through: string | null }>(
        'WITH gone AS (DELETE FROM sesame_directory_changes WHERE at < $1 RETURNING seq) SELECT count(*) AS n, max(seq) AS through FROM gone',
        [before],
      );
      removed = Number(rows[0]!.n);
      if (rows[0]!.through !== null) await client.query('UPDATE sesame_directory_pruned SET through = greatest(through, $1)', [rows[0]!.through]);
    });
    return removed;
  }

  /** Who holds a unique key. */
  async holder(key: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ owner: string }>('SELECT owner FROM sesame_unique_keys WHERE key = $1', [key]);
    return rows[0]?.owner;
  }

  /** The unique keys held under a prefix. */
  async heldUnder(prefix: string): Promise<Set<string>> {
    const { rows } = await this.pool.query<{ key: string }>('SELECT key FROM sesame_unique_keys WHERE starts_with(key, $1)', [prefix]);
    return new Set(rows.map((r) => r.key));
  }

  /** Runs `work` in one transaction holding the directory's lock; committed when it resolves. */
  private async inTurn(work: (client: pg.PoolClient) => Promise<void>): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [DIRECTORY_LOCK]);
      await work(client);
      await client.query('COMMIT');
    } catch (error) {
      // A refusal (a conflict, a taken key) leaves a healthy connection once rolled back; one that
      // cannot even roll back is dropped from the pool.
      try {
        await client.query('ROLLBACK');
      } catch (broken) {
        client.release(broken as Error);
        throw storeError(error);
      }
      client.release();
      throw storeError(error);
    }
    client.release();
  }

  private async read(client: Queryable, store: DirectoryStore, id: string): Promise<unknown> {
    const { rows } = await client.query<{ value: Buffer }>('SELECT value FROM sesame_directory WHERE store = $1 AND id = $2', [store, id]);
    return rows[0] ? codec.unpack(rows[0].value) : undefined;
  }

  /** The compare-and-set of one row: false when the store no longer holds the version `base` was (nothing written). */
  private async writeIfAt(client: Queryable, store: DirectoryStore, id: string, value: unknown, base: unknown): Promise<boolean> {
    if (base === undefined) {
      if (value === null) {
        const { rowCount } = await client.query('SELECT 1 FROM sesame_directory WHERE store = $1 AND id = $2', [store, id]);
        return rowCount === 0;
      }
      const { rowCount } = await client.query('INSERT INTO sesame_directory (store, id, value, sequence) VALUES ($1, $2, $3, $4) ON CONFLICT (store, id) DO NOTHING', [
        store,
        id,
        codec.pack(value),
        sequenceColumn(value),
      ]);
      return rowCount === 1;
    }
    if (value === null) {
      const { rowCount } = await client.query('DELETE FROM sesame_directory WHERE store = $1 AND id = $2 AND sequence IS NOT DISTINCT FROM $3', [store, id, sequenceColumn(base)]);
      return rowCount === 1;
    }
    const { rowCount } = await client.query('UPDATE sesame_directory SET value = $3, sequence = $4 WHERE store = $1 AND id = $2 AND sequence IS NOT DISTINCT FROM $5', [
      store,
      id,
      codec.pack(value),
      sequenceColumn(value),
      sequenceColumn(base),
    ]);
    return rowCount === 1;
  }

  private async upsert(client: Queryable, store: DirectoryStore, id: string, value: unknown): Promise<void> {
    await client.query(
      `INSERT INTO sesame_directory (store, id, value, sequence) VALUES ($1, $2, $3, $4)
       ON CONFLICT (store, id) DO UPDATE SET value = EXCLUDED.value, sequence = EXCLUDED.sequence`,
      [store, id, codec.pack(value), sequenceColumn(value)],
    );
  }

  /** Logs the changed rows, numbered after the last (the lock makes the numbers follow commit order), and tells the other nodes at commit. */
  private async logged(client: Queryable, changes: readonly DirectoryChange[]): Promise<number> {
    if (changes.length === 0) return 0;
    const { rows } = await client.query<{ seq: string }>(
      `INSERT INTO sesame_directory_changes (seq, store, id, at)
       SELECT greatest((SELECT coalesce(max(seq), 0) FROM sesame_directory_changes), (SELECT through FROM sesame_directory_pruned)) + c.n, c.store, c.id, $3
       FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS c(store, id, n)
       RETURNING seq`,
      [changes.map((c) => c.store), changes.map((c) => c.id), clock.now()],
    );
    // Delivered when (and only if) the transaction commits.
    await client.query('SELECT pg_notify($1, $2)', [FEED_CHANNEL, feedPayload('directory')]);
    let through = 0;
    for (const row of rows) through = Math.max(through, Number(row.seq));
    return through;
  }
}

/**
 * The directory as a node's copies read it on PostgreSQL: what was fetched, held in memory, so the
 * copies' reads never wait. `load` fetches whole stores (at start, or when the feed was lost);
 * `fetch` the rows the change feed names, before the copies take them in.
 */
export class PostgresDirectoryReader implements DirectoryReader {
  private readonly stores = new Map<DirectoryStore, Map<string, unknown>>();

  constructor(private readonly directory: PostgresDirectory) {}

  async load(stores: readonly DirectoryStore[]): Promise<void> {
    const loaded = await Promise.all(stores.map(async (store) => [store, await this.directory.entries(store)] as const));
    for (const [store, entries] of loaded) this.stores.set(store, new Map(entries.map(({ id, value }) => [id, value])));
  }

  reload(stores: readonly DirectoryStore[]): Promise<void> {
    return this.load(stores);
  }

  keysHeldUnder(prefix: string): Promise<Set<string>> {
    return this.directory.heldUnder(prefix);
  }

  async fetch(changes: readonly DirectoryChange[]): Promise<void> {
    const current = await this.directory.current(changes);
    for (const { store, id } of changes) {
      const rows = this.of(store);
      const row = current.get(`${store}\u0000${id}`);
      if (row === undefined) rows.delete(id);
      else rows.set(id, row);
    }
  }

  get<T>(store: DirectoryStore, id: string): T | undefined {
    return this.of(store).get(id) as T | undefined;
  }

  committed(store: DirectoryStore, id: string, row: unknown): void {
    const rows = this.of(store);
    const held = sequenceColumn(rows.get(id));
    if (held !== null && row !== undefined && (sequenceColumn(row) ?? -1) < held) return;
    if (row === undefined) rows.delete(id);
    else rows.set(id, row);
  }

  rows<T>(store: DirectoryStore): Iterable<T> {
    return this.of(store).values() as Iterable<T>;
  }

  ids(store: DirectoryStore): Iterable<string> {
    return this.of(store).keys();
  }

  private of(store: DirectoryStore): Map<string, unknown> {
    let rows = this.stores.get(store);
    if (!rows) this.stores.set(store, (rows = new Map()));
    return rows;
  }
}

/**
 * What the directory's actors need of a node on PostgreSQL (see DirectoryStorage): the database's
 * commits and a reader of what was fetched; a commit is durable once answered, and the other nodes
 * hear of it by the NOTIFY sent at commit (so announcing it here is nothing more to do).
 */
export function postgresDirectoryStorage(directory: PostgresDirectory, reader: PostgresDirectoryReader): DirectoryStorage {
  const durable = <T>(write: Promise<T>) => write;
  return {
    directoryWrites: directory,
    directoryReader: reader,
    durable,
    durableDirectory: durable,
    directoryChanged: () => undefined,
    meta: new MetaStore(reader, directory, durable),
  };
}
