import type pg from 'pg';
import type { Database } from 'lmdb';
import type { Storage, StoreName } from '../db.js';
import { DIRECTORY_STORES, type DirectoryStore } from '../directory-log.js';
import { migrate } from './migrations.js';
import { codec, sequenceColumn } from './codec.js';

/**
 * Copies an LMDB data dir into an empty PostgreSQL database, in one transaction: the directory
 * (orgs, users, projects, apps, grants, signing keys, settings) with its unique keys, and every
 * record the flows keep (tokens, revocations, codes, refresh families, sessions, sign-ins under way,
 * replay guards, the logout outbox), so people stay signed in and tokens stay valid when a team
 * moves from one node to many. The directory's change feed starts afresh: a node loads the
 * directory whole. A database that holds anything of Sesame's already is refused, nothing written.
 */

/** The directory's stores: every other store of the data dir holds the flows' records. */

/** Rows sent per statement. */
const CHUNK = 1000;

export class TargetNotEmpty extends Error {}

export interface CopyReport {
  /** Rows copied per store (the directory's and the flows'), and unique keys. */
  copied: Record<string, number>;
}

export async function copyDataDirToPostgres(storage: Storage, pool: pg.Pool): Promise<CopyReport> {
  const client = await pool.connect();
  const copied: Record<string, number> = {};
  try {
    await migrate(client);
    await client.query('BEGIN');
    try {
      const { rows } = await client.query<{ used: boolean }>(
        'SELECT EXISTS (SELECT 1 FROM sesame_records) OR EXISTS (SELECT 1 FROM sesame_directory) OR EXISTS (SELECT 1 FROM sesame_unique_keys) AS used',
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

