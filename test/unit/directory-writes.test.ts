import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WriteConflict } from '../../src/model/errors.js';
import { openStorage, type Storage } from '../../src/storage/db.js';
import type { DirectoryChange, DirectoryStore } from '../../src/storage/directory-log.js';
import type { DirectoryWrites } from '../../src/storage/directory-writes.js';
import { migrate } from '../../src/storage/postgres/migrations.js';
import { PostgresDirectory } from '../../src/storage/postgres/directory.js';
import type { UniqueKey } from '../../src/storage/unique-keys.js';
import { postgresCluster } from '../helpers/postgres.js';

/**
 * The directory's commits, held by both stores: LMDB (one node) and PostgreSQL (two pools on one
 * database stand for two nodes). A row is written only at the version its writer read, a unique key
 * is held by one owner, and every commit is logged in the change feed in commit order, or nothing is.
 */
interface Side {
  writes: DirectoryWrites;
  other: DirectoryWrites;
  read(store: DirectoryStore, id: string): Promise<unknown>;
  since(after: number): Promise<{ changes: DirectoryChange[]; last: number } | undefined>;
  holder(key: string): Promise<string | undefined>;
}

class Taken extends Error {}
const key = (k: string, owner: string): UniqueKey => ({ key: k, owner, taken: () => new Taken(`${k} is taken`) });

function contract(name: string, open: () => Promise<Side>, close: () => Promise<void>) {
  describe(`directory commits on ${name}`, () => {
    let side: Side;
    beforeAll(async () => {
      side = await open();
    });
    afterAll(close);

    it('writes a row at the version read and refuses one made from an older version, writing nothing of it', async () => {
      const { writes, other, read } = side;
      await writes.commit({ rows: [{ store: 'projects', id: 'p1', value: { id: 'p1', sequence: 1, name: 'One' }, base: undefined }] });
      await expect(other.commit({ rows: [{ store: 'projects', id: 'p1', value: { id: 'p1', sequence: 1, name: 'Again' }, base: undefined }] })).rejects.toBeInstanceOf(WriteConflict);
      const v1 = await read('projects', 'p1');
      await other.commit({ rows: [{ store: 'projects', id: 'p1', value: { id: 'p1', sequence: 2, name: 'Two' }, base: v1 }] });
      // A stale writer (it read sequence 1) is refused, and its other row in the commit is not written either.
      await expect(
        writes.commit({
          rows: [
            { store: 'orgs', id: 'o-stale', value: { id: 'o-stale', sequence: 1 }, base: undefined },
            { store: 'projects', id: 'p1', value: { id: 'p1', sequence: 2, name: 'Stale' }, base: v1 },
          ],
        }),
      ).rejects.toBeInstanceOf(WriteConflict);
      expect(await read('projects', 'p1')).toMatchObject({ name: 'Two' });
      expect(await read('orgs', 'o-stale')).toBeUndefined();
      // Removal at the version read.
      await expect(writes.commit({ rows: [{ store: 'projects', id: 'p1', value: null, base: v1 }] })).rejects.toBeInstanceOf(WriteConflict);
      await writes.commit({ rows: [{ store: 'projects', id: 'p1', value: null, base: await read('projects', 'p1') }] });
      expect(await read('projects', 'p1')).toBeUndefined();
    });

    it('of 12 writers from one version on two nodes at once, exactly one lands', async () => {
      const { writes, other, read } = side;
      await writes.commit({ rows: [{ store: 'users', id: 'u-race', value: { id: 'u-race', sequence: 1 }, base: undefined }] });
      const base = await read('users', 'u-race');
      const outcomes = await Promise.allSettled(
        Array.from({ length: 12 }, (_, i) => (i % 2 ? writes : other).commit({ rows: [{ store: 'users', id: 'u-race', value: { id: 'u-race', sequence: 2, by: i }, base }] })),
      );
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      expect(outcomes.filter((o) => o.status === 'rejected').every((o) => (o as PromiseRejectedResult).reason instanceof WriteConflict)).toBe(true);
    });

    it('a unique key is held by one owner: the same name added on two nodes at once lands once, and a freed key is free', async () => {
      const { writes, other, holder, read } = side;
      const outcomes = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 ? writes : other).commit({ rows: [{ store: 'users', id: `u${i}`, value: { id: `u${i}`, sequence: 1 }, base: undefined }], keys: { take: [key('user:org1:ada', `u${i}`)] } }),
        ),
      );
      const winners = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [i] : []));
      expect(winners).toHaveLength(1);
      expect(outcomes.filter((o) => o.status === 'rejected').every((o) => (o as PromiseRejectedResult).reason instanceof Taken)).toBe(true);
      expect(await holder('user:org1:ada')).toBe(`u${winners[0]}`);
      for (let i = 0; i < 8; i++) expect(await read('users', `u${i}`)).toEqual(i === winners[0] ? { id: `u${i}`, sequence: 1 } : undefined);
      // The owner taking its own key again is no conflict; another owner freeing it changes nothing.
      await writes.commit({ rows: [], keys: { take: [key('user:org1:ada', `u${winners[0]}`)], free: [{ key: 'user:org1:ada', owner: 'someone-else' }] } });
      expect(await holder('user:org1:ada')).toBe(`u${winners[0]}`);
      await other.commit({ rows: [], keys: { free: [{ key: 'user:org1:ada', owner: `u${winners[0]}` }] } });
      expect(await holder('user:org1:ada')).toBeUndefined();
      await writes.commit({ rows: [], keys: { take: [key('slot:p1/1', 'app1'), key('slot:p1/2', 'app1'), key('slot:p1/3', 'app2')] } });
      await other.commit({ rows: [], keys: { freeOwned: [{ prefix: 'slot:p1/', owner: 'app1' }] } });
      expect([await holder('slot:p1/1'), await holder('slot:p1/2'), await holder('slot:p1/3')]).toEqual([undefined, undefined, 'app2']);
    });

    it('buildKeys takes the keys no one holds (a data dir from before, once at start) and leaves held ones as they are', async () => {
      const { writes, holder } = side;
      await writes.commit({ rows: [], keys: { take: [key('org:held', 'o-old')] } });
      await writes.buildKeys([
        { key: 'org:held', owner: 'o-other' },
        { key: 'org:new', owner: 'o-new' },
      ]);
      expect([await holder('org:held'), await holder('org:new')]).toEqual(['o-old', 'o-new']);
    });

    it('logs every row a commit writes, in commit order, and a refused commit logs nothing', async () => {
      const { writes, other, since } = side;
      const start = (await since(0))!.last;
      await writes.commit({
        rows: [
          { store: 'orgs', id: 'log-1', value: { id: 'log-1' }, base: undefined },
          { store: 'members', id: 'log-m', value: { id: 'log-m' }, base: undefined },
        ],
      });
      await expect(other.commit({ rows: [{ store: 'orgs', id: 'log-1', value: { id: 'log-1' }, base: undefined }] })).rejects.toBeInstanceOf(WriteConflict);
      await other.change<{ id: string; n?: number }>('orgs', 'log-1', (stored) => ({ ...stored!, n: 1 }));
      // `next` that leaves the row logs nothing.
      expect(await writes.change('orgs', 'log-1', () => undefined)).toMatchObject({ written: false, row: { id: 'log-1', n: 1 } });
      const logged = (await since(start))!;
      expect(logged.changes).toEqual([
        { store: 'orgs', id: 'log-1' },
        { store: 'members', id: 'log-m' },
        { store: 'orgs', id: 'log-1' },
      ]);
      expect(logged.last).toBeGreaterThan(start);
    });

    it('change: read-modify-writes of one row on two nodes at once lose none; a throw in `next` writes nothing', async () => {
      const { writes, other, read } = side;
      await writes.commit({ rows: [{ store: 'users', id: 'counted', value: { id: 'counted', failures: 0 }, base: undefined }] });
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? writes : other).change<{ id: string; failures: number }>('users', 'counted', (stored) => ({ ...stored!, failures: stored!.failures + 1 }))),
      );
      expect(await read('users', 'counted')).toEqual({ id: 'counted', failures: 20 });
      await expect(
        writes.change('users', 'counted', () => {
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      expect(await read('users', 'counted')).toEqual({ id: 'counted', failures: 20 });
    });
  });
}

let dir: string;
let storage: Storage;
contract(
  'LMDB',
  async () => {
    dir = mkdtempSync(join(tmpdir(), 'sesame-directory-writes-'));
    storage = openStorage(dir, 'commit');
    const dbOf = (store: DirectoryStore) => (store === 'meta' ? storage.root.openDB({ name: 'meta', encoding: 'msgpack' }) : storage.stores[store as Exclude<DirectoryStore, 'meta'>]);
    return {
      writes: storage.directoryWrites,
      other: storage.directoryWrites,
      read: async (store, id) => {
        storage.freshReads();
        return dbOf(store).get(id);
      },
      since: async (after) => storage.directoryLog.since(after, 1000),
      holder: async (k) => storage.uniqueKeys.holder(k),
    };
  },
  async () => {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  },
);

const pools: pg.Pool[] = [];
contract(
  'PostgreSQL',
  async () => {
    const url = await (await postgresCluster()).database('directory_writes');
    const [a, b] = [new pg.Pool({ connectionString: url }), new pg.Pool({ connectionString: url })];
    pools.push(a, b);
    const client = await a.connect();
    await migrate(client);
    client.release();
    const [one, two] = [new PostgresDirectory(a), new PostgresDirectory(b)];
    return {
      writes: one,
      other: two,
      read: async (store, id) => (await one.current([{ store, id }])).get(`${store}\u0000${id}`),
      since: (after) => two.since(after, 1000),
      holder: (k) => two.holder(k),
    };
  },
  async () => {
    await Promise.all(pools.map((pool) => pool.end()));
  },
);
