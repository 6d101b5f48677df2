import type pg from 'pg';
import type { Database } from 'lmdb';
import type { Storage, StoreName } from '../db.js';
import { DIRECTORY_STORES, type DirectoryStore } from '../directory-log.js';
import { migrate, MIGRATIONS, SchemaTooNew } from './migrations.js';
import { codec, sequenceColumn } from './codec.js';
import { copyEventsIn, eventsAfter } from './activity.js';
import type { ActivityEvent } from '../../model/activity.js';

/** Rows sent per statement. */
const CHUNK = 1000;

export class TargetNotEmpty extends Error {}

export interface CopyReport {
  /** Rows copied per store (the directory's and the flows'), and unique keys. */
  copied: Record<string, number>;
}

/**
 * Copies an LMDB data dir into an empty PostgreSQL database, in one transaction: the directory
 * (orgs, users, projects, apps, grants, signing keys, settings) with its unique keys, and every
 * record the flows keep (tokens, revocations, codes, refresh families, sessions, sign-ins under way,
 * replay guards, the logout outbox) and the activity log, so people stay signed in and tokens
 * stay valid when a team moves from one node to many. The directory's change feed starts afresh: a
 * node loads the directory whole. A database that holds anything of Sesame's already is refused,
 * nothing written. The directory's stores are DIRECTORY_STORES: every other store of the data dir
 * holds the flows' records.
 */
export async function copyDataDirToPostgres(storage: Storage, pool: pg.Pool): Promise<CopyReport> {
  const client = await pool.connect();
  const copied: Record<string, number> = {};
  try {
    await migrate(client);
    await client.query('BEGIN');
    try {
      const { rows } = await client.query<{ used: boolean }>(
        'SELECT EXISTS (SELECT 1 FROM sesame_records) OR EXISTS (SELECT 1 FROM sesame_directory) OR EXISTS (SELECT 1 FROM sesame_unique_keys) OR EXISTS (SELECT 1 FROM sesame_activity) AS used',
      );
      if (rows[0]!.used) throw new TargetNotEmpty('the database already holds Sesame data: copy into an empty one');
      const meta = storage.root.openDB<any, string>({ name: 'meta', encoding: 'msgpack' });
      for (const store of DIRECTORY_STORES) {
        const db = store === 'meta' ? meta : storage.stores[store as StoreName];
        copied[store] = await inChunks(db, (chunk) =>
          client.query('INSERT INTO sesame_directory (store, id, value, sequence) SELECT $1, * FROM unnest($2::text[], $3::bytea[], $4::bigint[])', [
            store,
            chunk.map(({ key }) => String(key)),
            chunk.map(({ value }) => codec.pack(value)),
            chunk.map(({ value }) => sequenceColumn(value)),
          ]),
        );
      }
      copied.uniqueKeys = await inChunks(storage.root.openDB<string, string>({ name: 'uniqueKeys', encoding: 'msgpack' }), (chunk) =>
        client.query('INSERT INTO sesame_unique_keys (key, owner) SELECT * FROM unnest($1::text[], $2::text[])', [chunk.map(({ key }) => String(key)), chunk.map(({ value }) => String(value))]),
      );
      const records: [string, Database<any, any>][] = [
        ...Object.entries(storage.stores).filter(([name]) => !DIRECTORY_STORES.includes(name as DirectoryStore)),
        ['tokens', storage.tokens],
        ['revokedJwts', storage.revokedJwts],
        ['usedAssertions', storage.usedAssertions],
      ];
      for (const [kind, db] of records) {
        copied[kind] = await inChunks(db, (chunk) =>
          client.query('INSERT INTO sesame_records (kind, key, value, n) SELECT $1, * FROM unnest($2::bytea[], $3::bytea[], $4::bigint[])', [
            kind,
            chunk.map(({ key }) => (typeof key === 'string' ? Buffer.from(key, 'utf8') : Buffer.from(key as Uint8Array))),
            chunk.map(({ value }) => codec.pack(value)),
            // What raiseTo compares: a revocation's (or a used assertion's) time.
            chunk.map(({ value }) => (typeof value === 'number' ? value : null)),
          ]),
        );
      }
      // The activity log under its own numbers, so an event's sequence means the same on both sides.
      let events: ActivityEvent[] = [];
      copied.activity = 0;
      for (const { seq, entry } of storage.activity.entries()) {
        events.push({ seq, ...entry });
        if (events.length === CHUNK) {
          await copyEventsIn(client, events);
          copied.activity += events.length;
          events = [];
        }
      }
      await copyEventsIn(client, events, storage.activity.prunedThrough());
      copied.activity += events.length;
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK');
      throw error;
    }
  } finally {
    client.release();
  }
  return { copied };
}

async function inChunks(db: Database<any, any>, write: (chunk: { key: unknown; value: unknown }[]) => Promise<unknown>): Promise<number> {
  let count = 0;
  let chunk: { key: unknown; value: unknown }[] = [];
  for (const { key, value } of db.getRange()) {
    chunk.push({ key, value });
    if (chunk.length === CHUNK) {
      await write(chunk);
      count += chunk.length;
      chunk = [];
    }
  }
  if (chunk.length > 0) await write(chunk);
  return count + chunk.length;
}

/**
 * The way back: a PostgreSQL database copied into a new (empty) data dir, read in one snapshot
 * (REPEATABLE READ): the directory with its unique keys, every record of the flows and the activity log, so a team
 * can go back to one node without asking anyone to sign in again. Stop the nodes first: what they
 * write after the snapshot is not in the copy. A data dir that holds Sesame data is refused,
 * nothing written. The data dir's change feed starts afresh (its threads load the directory whole).
 */
export async function copyPostgresToDataDir(pool: pg.Pool, storage: Storage): Promise<CopyReport> {
  const meta = storage.root.openDB<any, string>({ name: 'meta', encoding: 'msgpack' });
  const uniqueKeys = storage.root.openDB<string, string>({ name: 'uniqueKeys', encoding: 'msgpack' });
  const databases: Record<string, Database<any, any>> = { ...storage.stores, tokens: storage.tokens, revokedJwts: storage.revokedJwts, usedAssertions: storage.usedAssertions };
  const any = (db: Database<any, any>) => [...db.getKeys({ limit: 1 })].length > 0;
  const holdsData = Object.values(databases).some(any) || [...meta.getKeys()].some((key) => key !== 'schemaVersion') || any(uniqueKeys) || !storage.activity.entries().next().done;
  if (holdsData) throw new TargetNotEmpty('the data dir already holds Sesame data: copy into a new, empty one');
  const client = await pool.connect();
  const copied: Record<string, number> = {};
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    try {
      // Refuses a database newer than this build (its rows may mean what this build does not know).
      const { rows: schema } = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM sesame_schema');
      const newest = MIGRATIONS.at(-1)!.version;
      if ((schema[0]?.version ?? 0) > newest) throw new SchemaTooNew(`the database's schema is at version ${schema[0]!.version}, this Sesame knows up to ${newest}: copy with a newer build`);
      for (const store of DIRECTORY_STORES) {
        const db = store === 'meta' ? meta : storage.stores[store as StoreName];
        copied[store] = await pages<{ id: string; value: Buffer }>(
          client,
          'SELECT id, value FROM sesame_directory WHERE store = $1 AND id > $2 ORDER BY id LIMIT $3',
          [store],
          (row) => row.id,
          '',
          (rows) => {
            for (const row of rows) if (!(store === 'meta' && row.id === 'schemaVersion')) void db.put(row.id, codec.unpack(row.value));
          },
        );
      }
      copied.uniqueKeys = await pages<{ key: string; owner: string }>(
        client,
        'SELECT key, owner FROM sesame_unique_keys WHERE key > $1 ORDER BY key LIMIT $2',
        [],
        (row) => row.key,
        '',
        (rows) => {
          for (const row of rows) void uniqueKeys.put(row.key, row.owner);
        },
      );
      const { rows: kinds } = await client.query<{ kind: string }>('SELECT DISTINCT kind FROM sesame_records ORDER BY kind');
      for (const { kind } of kinds) {
        const db = databases[kind];
        if (!db) throw new Error(`the database holds records of a kind this Sesame does not know (${kind}): copy with the build that wrote them`);
        // Token digests are binary keys; every other kind's keys are text.
        const binary = kind === 'tokens';
        copied[kind] = await pages<{ key: Buffer; value: Buffer }>(
          client,
          'SELECT key, value FROM sesame_records WHERE kind = $1 AND key > $2 ORDER BY key LIMIT $3',
          [kind],
          (row) => row.key,
          Buffer.alloc(0),
          (rows) => {
            for (const row of rows) void db.put(binary ? row.key : row.key.toString('utf8'), codec.unpack(row.value));
          },
        );
      }
      copied.activity = 0;
      for (let after = 0; ; ) {
        const { events, prunedThrough } = await eventsAfter(client, after, CHUNK);
        storage.activity.load(events, prunedThrough);
        copied.activity += events.length;
        if (events.length < CHUNK) break;
        after = events.at(-1)!.seq;
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  } finally {
    client.release();
  }
  // Every put above is in LMDB's pending batch: durable (synced) before the copy says it is done.
  await storage.root.flushed;
  return { copied };
}

/** Reads a query page by page (keyset: after the last key of the page before), handing each page to `take`; the count. */
async function pages<R extends Record<string, unknown>>(client: pg.PoolClient, sql: string, params: unknown[], keyOf: (row: R) => unknown, first: unknown, take: (rows: R[]) => void): Promise<number> {
  let after = first;
  let count = 0;
  for (;;) {
    const { rows } = await client.query<R>(sql, [...params, after, CHUNK]);
    if (rows.length === 0) return count;
    take(rows);
    count += rows.length;
    after = keyOf(rows[rows.length - 1]!);
    if (rows.length < CHUNK) return count;
  }
}
