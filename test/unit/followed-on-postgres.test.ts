import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DirectoryStore } from '../../src/storage/directory-log.js';
import { PostgresChangeFeed } from '../../src/storage/postgres/change-feed.js';
import { Table } from '../../src/storage/table.js';
import { FollowedOnPostgres } from '../../src/threads/followed-on-postgres.js';
import type { DirectoryCopy } from '../../src/threads/followed-writes.js';
import { directoryNode, migratedDatabase } from '../helpers/postgres.js';

/**
 * A node's copies following the directory on PostgreSQL: a commit on another node notifies, the
 * rows the feed names are fetched and taken in; a copy that fell behind the (pruned) feed, or meets
 * a store it does not hold row by row, loads whole.
 */
type Row = { id: string; sequence: number; name: string };
const pools: pg.Pool[] = [];
const feeds: PostgresChangeFeed[] = [];
let url: string;

async function node() {
  const { pool, directory, reader } = await directoryNode(url, pools, ['projects', 'users']);
  const tables: Partial<Record<DirectoryStore, Table<Row>>> = {
    projects: new Table<Row>(reader, { store: 'projects', writes: directory, announce: () => undefined }),
    users: new Table<Row>(reader, { store: 'users', writes: directory, announce: () => undefined }),
  };
  const seen = { keyLoads: 0, metaReloads: 0 };
  const copy: DirectoryCopy = {
    orgs: {
      takeChange: (store, id) => {
        const table = tables[store];
        if (!table) return false;
        table.refresh(id);
        return true;
      },
      retakeAll: () => {
        for (const table of Object.values(tables)) for (const id of table.ids()) table.refresh(id);
      },
    },
    clients: { takeChange: () => false, retakeAll: () => undefined },
    keys: { load: () => void seen.keyLoads++ },
    storage: { meta: { reload: () => void seen.metaReloads++ } } as DirectoryCopy['storage'],
    settings: { storedChanged: () => undefined },
  };
  const feed = new PostgresChangeFeed(pool, () => new pg.Client(url));
  await feed.start();
  feeds.push(feed);
  const followed = new FollowedOnPostgres(directory, reader, copy, feed, await directory.last());
  return { directory, tables, followed, feed, seen };
}

beforeAll(async () => {
  url = await migratedDatabase('followed');
});

afterAll(async () => {
  await Promise.all(feeds.map((feed) => feed.close()));
  await Promise.all(pools.map((pool) => pool.end()));
});

describe('copies following the directory on PostgreSQL', () => {
  it("a commit on A notifies B, whose copy then holds it; B's next write from it lands", async () => {
    const [a, b] = [await node(), await node()];
    const seen = b.feed.version('directory');
    const woken = b.feed.after('directory', seen, 60_000);
    await a.tables.projects!.put({ id: 'p1', sequence: 1, name: 'Shop' });
    expect(await woken).toBeGreaterThan(seen);
    expect(b.tables.projects!.get('p1')).toBeUndefined();
    await b.followed.look();
    expect(b.tables.projects!.get('p1')).toEqual({ id: 'p1', sequence: 1, name: 'Shop' });
    await b.tables.projects!.put({ ...b.tables.projects!.get('p1')!, sequence: 2, name: 'Shop (B)' });
    await a.followed.look();
    expect(a.tables.projects!.get('p1')?.name).toBe('Shop (B)');
    // Looks asked for at once share the passes: every commit before a look is held once it resolves.
    await a.tables.users!.put({ id: 'u1', sequence: 1, name: 'Ada' });
    await Promise.all([b.followed.look(), b.followed.look(), b.followed.look()]);
    expect(b.tables.users!.get('u1')?.name).toBe('Ada');
    expect(b.followed.wholeLoads).toBe(0);
  });

  it('a feed pruned past the copy, or a change to a store it does not hold row by row, loads the copy whole', async () => {
    const [a, b] = [await node(), await node()];
    await a.tables.users!.put({ id: 'u2', sequence: 1, name: 'Grace' });
    await a.directory.pruneFeed(Number.MAX_SAFE_INTEGER);
    await b.followed.look();
    expect(b.followed.wholeLoads).toBe(1);
    expect(b.tables.users!.get('u2')?.name).toBe('Grace');
    expect(b.seen.keyLoads).toBe(1);

    // Signing keys and settings are read again whole by their owners; a store nobody here holds makes the copy load.
    await a.directory.commit({ rows: [{ store: 'apps', id: 'app1', value: { id: 'app1' }, base: undefined }] });
    await b.followed.look();
    expect(b.followed.wholeLoads).toBe(2);
    await a.directory.commit({ rows: [{ store: 'meta', id: 'features', value: { oidcTokenExchange: true }, base: undefined }] });
    await b.followed.look();
    expect(b.followed.wholeLoads).toBe(2);
    expect(b.seen.metaReloads).toBe(3);
  });

  it('a node that stopped listening answers from its copies only after a look of its own; following takes notified changes by itself', async () => {
    const [a, b] = [await node(), await node()];
    // Never looked since it began listening: the first request waits for a look.
    const first = b.followed.current();
    expect(first).toBeInstanceOf(Promise);
    await first;
    expect(b.followed.current()).toBeUndefined();

    // B's LISTEN connection is cut (a network cut, a server restart): what A commits meanwhile is unheard.
    const admin = new pg.Client(url);
    await admin.connect();
    try {
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = 'LISTEN sesame_feed' AND pid <> pg_backend_pid()");
    } finally {
      await admin.end();
    }
    await a.tables.users!.put({ id: 'u3', sequence: 1, name: 'Hedy' });
    for (let i = 0; i < 200 && b.feed.connection().listening; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    const waiting = b.followed.current();
    expect(waiting).toBeInstanceOf(Promise);
    await waiting;
    expect(b.tables.users!.get('u3')?.name).toBe('Hedy');

    // Listening again (a new generation) it still looks once before answering from the copies.
    for (let i = 0; i < 400 && !b.feed.connection().listening; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(b.feed.connection().listening).toBe(true);
    await b.followed.current();
    expect(b.followed.current()).toBeUndefined();

    // Following: a notified commit reaches the copy without anyone asking.
    b.followed.follow(60_000);
    try {
      await a.tables.users!.put({ id: 'u4', sequence: 1, name: 'Radia' });
      for (let i = 0; i < 400 && !b.tables.users!.get('u4'); i++) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(b.tables.users!.get('u4')?.name).toBe('Radia');
    } finally {
      b.followed.stop();
    }
  });
});
