import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WriteConflict } from '../../src/model/errors.js';
import { WriteBatch } from '../../src/storage/batch.js';
import type { DirectoryStore } from '../../src/storage/directory-log.js';
import { PostgresDirectory, PostgresDirectoryReader } from '../../src/storage/postgres/directory.js';
import { Table } from '../../src/storage/table.js';
import { migratedDatabase } from '../helpers/postgres.js';

/**
 * Copies of the directory on two nodes over one PostgreSQL database, as the actors hold them
 * (Table, WriteBatch): each loads the stores, writes through the store's commits, and takes in
 * what the other wrote from the change feed; a write made from a copy that is behind is refused
 * by the database, whatever that copy knew.
 */
type Project = { id: string; sequence: number; name: string };
type Grant = { id: string; sequence: number; projectId: string };

interface Node {
  directory: PostgresDirectory;
  reader: PostgresDirectoryReader;
  projects: Table<Project>;
  grants: Table<Grant>;
  applied: number;
  announced: number;
}

const STORES: DirectoryStore[] = ['projects', 'userGrants'];
const pools: pg.Pool[] = [];
let url: string;

async function node(): Promise<Node> {
  const pool = new pg.Pool({ connectionString: url });
  pools.push(pool);
  const directory = new PostgresDirectory(pool);
  const reader = new PostgresDirectoryReader(directory);
  const applied = await directory.last();
  await reader.load(STORES);
  const made: Partial<Node> = { directory, reader, applied, announced: 0 };
  const announce = () => void (made.announced! += 1);
  made.projects = new Table<Project>(reader, { store: 'projects', writes: directory, announce });
  made.grants = new Table<Grant>(reader, { store: 'userGrants', writes: directory, announce });
  return made as Node;
}

/** What a node does when the feed moves: the rows named since it last looked, fetched, then taken in. */
async function catchUp(n: Node): Promise<void> {
  const feed = (await n.directory.since(n.applied, 1000))!;
  await n.reader.fetch(feed.changes);
  for (const { store, id } of feed.changes) (store === 'projects' ? n.projects : n.grants).refresh(id);
  n.applied = feed.last;
}

beforeAll(async () => {
  url = await migratedDatabase('directory_copies');
});

afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end()));
});

describe('copies of the directory on two nodes over PostgreSQL', () => {
  it('a row written on A reaches B through the feed; B changes it; A, behind, is refused and then follows', async () => {
    const [a, b] = [await node(), await node()];
    await a.projects.put({ id: 'p1', sequence: 1, name: 'Shop' });
    expect(b.projects.get('p1')).toBeUndefined();
    await catchUp(b);
    expect(b.projects.get('p1')).toEqual({ id: 'p1', sequence: 1, name: 'Shop' });

    await b.projects.put({ ...b.projects.get('p1')!, sequence: 2, name: 'Shop (B)' });
    // A's copy still holds sequence 1: the database refuses a write made from it, and A's copy goes back.
    await expect(a.projects.put({ ...a.projects.get('p1')!, sequence: 2, name: 'Shop (A)' })).rejects.toBeInstanceOf(WriteConflict);
    expect(a.projects.get('p1')?.name).toBe('Shop');
    await catchUp(a);
    expect(a.projects.get('p1')).toEqual({ id: 'p1', sequence: 2, name: 'Shop (B)' });
    // From the row as stored, A's change lands.
    await a.projects.put({ ...a.projects.get('p1')!, sequence: 3, name: 'Shop (A)' });
    await catchUp(b);
    expect(b.projects.get('p1')?.name).toBe('Shop (A)');
  });

  it('a batch (an import) lands whole on one node and is refused whole when a row moved on the other', async () => {
    const [a, b] = [await node(), await node()];
    const batch = new WriteBatch();
    a.projects.stage({ id: 'p2', sequence: 1, name: 'Imported' }, batch);
    a.grants.stage({ id: 'g1', sequence: 1, projectId: 'p2' }, batch);
    await batch.commit({ directoryWrites: a.directory, durableDirectory: (write) => write });
    await catchUp(b);
    expect([b.projects.get('p2')?.name, b.grants.get('g1')?.projectId]).toEqual(['Imported', 'p2']);

    // B renames the project; A's next batch was staged from the old row: nothing of it is written.
    await b.projects.put({ ...b.projects.get('p2')!, sequence: 2, name: 'Renamed' });
    const stale = new WriteBatch();
    a.projects.stage({ ...a.projects.get('p2')!, sequence: 2, name: 'Stale' }, stale);
    a.grants.stage({ id: 'g2', sequence: 1, projectId: 'p2' }, stale);
    await expect(stale.commit({ directoryWrites: a.directory, durableDirectory: (write) => write })).rejects.toBeInstanceOf(WriteConflict);
    await catchUp(a);
    expect(a.projects.get('p2')?.name).toBe('Renamed');
    expect(a.grants.get('g2')).toBeUndefined();
  });

  it('a read-modify-write on both nodes at once (a failure count) loses none, and each copy holds the row as committed', async () => {
    const [a, b] = [await node(), await node()];
    await a.projects.put({ id: 'p3', sequence: 1, name: '0' });
    await catchUp(b);
    const bump = (stored: Project | undefined) => ({ ...stored!, name: String(Number(stored!.name) + 1) });
    await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).projects.change('p3', bump)));
    await Promise.all([catchUp(a), catchUp(b)]);
    expect([a.projects.get('p3')?.name, b.projects.get('p3')?.name]).toEqual(['10', '10']);
    // The writer's copy holds its own change as committed at once (its reader took it in), no catch-up needed.
    await b.projects.change('p3', bump);
    expect(b.projects.get('p3')?.name).toBe('11');
    expect(b.reader.get<Project>('projects', 'p3')?.name).toBe('11');
  });
});

describe('unique keys under a prefix on PostgreSQL', () => {
  it('are found and freed by prefix exactly (non-ASCII and the highest characters included), through a range of the index', async () => {
    const pool = new pg.Pool({ connectionString: url });
    pools.push(pool);
    const directory = new PostgresDirectory(pool);
    const taken = () => new Error('taken');
    const keys = ['reg/p1/a', 'reg/p1/ü', 'reg/p1/\u{10FFFE}', 'reg/p10/a', 'reg/p1', 'reg/p0/z', 'reg/p2/a'];
    await directory.commit({ rows: [], keys: { take: keys.map((key) => ({ key, owner: key.startsWith('reg/p1/') ? 'o1' : 'o2', taken })) } });
    expect([...(await directory.heldUnder('reg/p1/'))].sort()).toEqual(['reg/p1/a', 'reg/p1/ü', 'reg/p1/\u{10FFFE}'].sort());
    await directory.commit({ rows: [], keys: { freeOwned: [{ prefix: 'reg/p1/', owner: 'o1' }] } });
    expect(await directory.heldUnder('reg/p1/')).toEqual(new Set());
    expect([...(await directory.heldUnder('reg/'))].sort()).toEqual(['reg/p0/z', 'reg/p1', 'reg/p10/a', 'reg/p2/a']);
    // The column compares byte by byte (migration 3), so PostgreSQL makes a prefix a range of the
    // primary key's index, whatever collation the database was created with (under a language
    // collation, en_US.UTF-8 on most servers, it was a scan of every key).
    const client = await pool.connect();
    try {
      await client.query('SET enable_seqscan = off');
      const plan = await client.query(`EXPLAIN SELECT key FROM sesame_unique_keys WHERE starts_with(key, 'reg/p1/')`);
      expect(plan.rows.map((row) => row['QUERY PLAN']).join('\n')).toMatch(/Index (Only )?Scan (using|on) sesame_unique_keys_pkey/);
      const { rows } = await client.query(`SELECT collation_name FROM information_schema.columns WHERE table_name = 'sesame_unique_keys' AND column_name = 'key'`);
      expect(rows[0].collation_name).toBe('C');
    } finally {
      client.release();
    }
  });
});
