import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import pg from 'pg';
import { ON_POSTGRES, testStoreEnv } from './postgres.js';

/**
 * What a stopped test server left in its store, read from the store itself: the LMDB file in its
 * data dir, or with SESAME_TEST_STORE=postgres the database the suite gave that data dir.
 */
async function withDatabase<T>(dataDir: string, read: (client: pg.Client) => Promise<T>): Promise<T> {
  const { SESAME_DATABASE_URL: url } = await testStoreEnv(dataDir, undefined);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await read(client);
  } finally {
    await client.end();
  }
}

/** Every byte the store holds (for a search for what must never be written). */
export async function storedBytes(dataDir: string): Promise<Buffer> {
  if (!ON_POSTGRES) return readFileSync(join(dataDir, 'sesame.lmdb'));
  return withDatabase(dataDir, async (client) => {
    const { rows } = await client.query<{ key: Buffer; value: Buffer }>(
      `SELECT key, value FROM sesame_records UNION ALL SELECT convert_to(id, 'UTF8'), value FROM sesame_directory UNION ALL SELECT convert_to(key, 'UTF8'), convert_to(owner, 'UTF8') FROM sesame_unique_keys`,
    );
    return Buffer.concat(rows.flatMap((row) => [row.key, row.value]));
  });
}

/** How many records of a kind (an LMDB database's name: `tokens`, `refreshFamilies`, …) the store holds. */
export async function storedRecordCount(dataDir: string, kind: string): Promise<number> {
  if (ON_POSTGRES) return withDatabase(dataDir, async (client) => (await client.query<{ n: number }>('SELECT count(*)::int AS n FROM sesame_records WHERE kind = $1', [kind])).rows[0]!.n);
  const db = open({ path: join(dataDir, 'sesame.lmdb'), maxDbs: 32, readOnly: true });
  try {
    return [...db.openDB({ name: kind, keyEncoding: 'binary' }).getKeys()].length;
  } finally {
    await db.close();
  }
}
