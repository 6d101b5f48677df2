import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage, type Storage } from '../../src/storage/db.js';
import { DestructiveMigrationPending, migrate, SchemaTooNew, MIGRATIONS } from '../../src/storage/postgres/migrations.js';
import { openPostgresStore, POSTGRES_DEFAULTS } from '../../src/storage/postgres/connection.js';
import { binaryRecordKind, recordKind, type StorePort } from '../../src/storage/store-port.js';
import type { Lease } from '../../src/storage/decisions.js';
import { postgresCluster } from '../helpers/postgres.js';

/**
 * The store port's contract, held by both stores: LMDB (one node) and PostgreSQL (many nodes: two
 * pools on one database stand for two nodes, each decision raced from both at once). What must
 * happen once happens once; nothing decided from a stale read is written.
 */
interface Nodes {
  a: StorePort;
  b: StorePort;
}

const codes = recordKind<{ grant: string; usedAt?: number }>('authCodes');
const pushed = recordKind<{ id: string; slot?: string }>('pushedRequests');
const pushedIndex = recordKind<unknown>('pushedRequestsByClient');
const sessions = recordKind<{ apps: string[] }>('userSessions');
const sessionIndex = recordKind<string>('sessionIndex');
const revokedGrants = recordKind<number>('revokedGrants');
const leases = recordKind<Lease>('leases');
const counters = recordKind<number[]>('failureWindows');
const tokens = binaryRecordKind<{ sub: string }>('tokens');

const both = (nodes: Nodes) => [nodes.a, nodes.b];
/** `n` calls at once, alternating between the nodes. */
const atOnce = <T>(nodes: Nodes, n: number, call: (store: StorePort, i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => call(both(nodes)[i % 2]!, i)));

function contract(name: string, open: () => Promise<Nodes>, close: () => Promise<void>) {
  describe(`store port on ${name}`, () => {
    let nodes: Nodes;
    beforeAll(async () => {
      nodes = await open();
    });
    afterAll(close);

    it('reads, writes, ranges by prefix (in key order, limited) and removes; binary keys too', async () => {
      const { a, b } = nodes;
      await a.put(sessionIndex, 'a/agent1/s2', 's2');
      await a.put(sessionIndex, 'a/agent1/s1', 's1');
      await a.put(sessionIndex, 'a/agent10/s3', 's3');
      await a.put(sessionIndex, 'u/user1/s1', 's1');
      expect(await b.get(sessionIndex, 'a/agent1/s1')).toBe('s1');
      expect((await b.range(sessionIndex, 'a/agent1/')).map((r) => r.key)).toEqual(['a/agent1/s1', 'a/agent1/s2']);
      expect((await b.range(sessionIndex, 'a/agent1')).map((r) => r.value)).toEqual(['s1', 's2', 's3']);
      expect(await b.range(sessionIndex, 'a/', 1)).toEqual([{ key: 'a/agent1/s1', value: 's1' }]);
      expect(await b.remove(sessionIndex, 'a/agent1/s1')).toBe(true);
      expect(await a.remove(sessionIndex, 'a/agent1/s1')).toBe(false);
      expect(await a.get(sessionIndex, 'a/agent1/s1')).toBeUndefined();

      const digest = new Uint8Array(32).fill(7);
      await a.durable(a.put(tokens, digest, { sub: 'u1' }));
      expect(await b.get(tokens, Buffer.from(digest))).toEqual({ sub: 'u1' });
      expect(await b.get(tokens, new Uint8Array(32).fill(8))).toBeUndefined();
    });

    it('present: whether each of several records, of different kinds and key types, is there, in one look', async () => {
      const { a, b } = nodes;
      const digest = new Uint8Array(32).fill(9);
      await a.durable(
        a.write([
          { kind: tokens, key: digest, value: { sub: 'u2' } },
          { kind: revokedGrants, key: 'present-g1', value: 10 },
        ]),
      );
      const reads = [
        { kind: tokens, key: digest },
        { kind: tokens, key: new Uint8Array(32).fill(10) },
        { kind: revokedGrants, key: 'present-g1' },
        // The same key under another kind is another record.
        { kind: sessionIndex, key: 'present-g1' },
        { kind: revokedGrants, key: 'present-g2' },
      ];
      expect(await b.present(reads)).toEqual([true, false, true, false, false]);
      expect(await b.present([])).toEqual([]);
      await b.remove(tokens, digest);
      expect(await a.present(reads.slice(0, 1))).toEqual([false]);
    });

    it('write: several records in one commit', async () => {
      await nodes.a.write([
        { kind: sessions, key: 'w1', value: { apps: ['x'] } },
        { kind: sessionIndex, key: 'u/w/w1', value: 'w1' },
      ]);
      expect(await nodes.b.get(sessions, 'w1')).toEqual({ apps: ['x'] });
      await nodes.b.write([
        { kind: sessions, key: 'w1', value: null },
        { kind: sessionIndex, key: 'u/w/w1', value: null },
      ]);
      expect(await nodes.a.get(sessions, 'w1')).toBeUndefined();
      expect(await nodes.a.get(sessionIndex, 'u/w/w1')).toBeUndefined();
    });

    it('insertIfAbsent: one first use among 16 at once', async () => {
      const results = await atOnce(nodes, 16, (store, i) => store.insertIfAbsent(revokedGrants, 'jti-1', i));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await nodes.a.get(revokedGrants, 'jti-1')).toBe(results.indexOf(true));
    });

    it('claimOnce: one claim among 16 at once; the others see the record as claimed', async () => {
      await nodes.a.put(codes, 'code-1', { grant: 'g1' });
      const results = await atOnce(nodes, 16, (store, i) => store.claimOnce(codes, 'code-1', (found) => (found.usedAt === undefined ? { ...found, usedAt: i + 1 } : undefined)));
      const winners = results.filter((r) => r.claimed);
      expect(winners).toHaveLength(1);
      expect(winners[0]!.found).toEqual({ grant: 'g1' });
      const stored = await nodes.b.get(codes, 'code-1');
      expect(stored?.usedAt).toBeGreaterThan(0);
      // A late claim sees the mark (a replay to answer).
      expect(await nodes.b.claimOnce(codes, 'code-1', (found) => (found.usedAt === undefined ? found : undefined))).toEqual({ found: stored, claimed: false });
      expect(await nodes.b.claimOnce(codes, 'missing', (found) => found)).toEqual({ found: undefined, claimed: false });
    });

    it('takeOnce: one taker among 16 at once, and what goes with it leaves in the same commit', async () => {
      await nodes.a.put(sessions, 's-take', { apps: ['app'] });
      await nodes.a.put(sessionIndex, 'u/taker/s-take', 's-take');
      const results = await atOnce(nodes, 16, (store) => store.takeOnce(sessions, 's-take', () => [{ kind: sessionIndex, key: 'u/taker/s-take', value: null }]));
      expect(results.filter((r) => r !== undefined)).toEqual([{ apps: ['app'] }]);
      expect(await nodes.b.get(sessions, 's-take')).toBeUndefined();
      expect(await nodes.b.get(sessionIndex, 'u/taker/s-take')).toBeUndefined();
    });

    it('raiseTo: the highest of many raises at once stays; a lower one changes nothing', async () => {
      const values = [5, 9, 3, 12, 7, 12, 1, 11];
      await atOnce(nodes, values.length, (store, i) => store.raiseTo(revokedGrants, 'grant-r', values[i]!));
      expect(await nodes.a.get(revokedGrants, 'grant-r')).toBe(12);
      expect(await nodes.b.raiseTo(revokedGrants, 'grant-r', 10)).toBe(false);
      expect(await nodes.b.raiseTo(revokedGrants, 'grant-r', 13)).toBe(true);
      expect(await nodes.a.get(revokedGrants, 'grant-r')).toBe(13);
    });

    it('update: 40 read-modify-writes at once from both nodes lose none', async () => {
      await atOnce(nodes, 40, (store, i) => store.update(counters, 'window', (found) => [...(found ?? []), i]));
      const stored = await nodes.a.get(counters, 'window');
      expect([...stored!].sort((x, y) => x - y)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    });

    it('update: null removes, undefined leaves, and the writes it carries land with it', async () => {
      const noteApp = (app: string) => (found: { apps: string[] } | undefined) => ({ apps: [...(found?.apps ?? []), app] });
      await atOnce(nodes, 10, (store, i) =>
        store.update(sessions, 's-upd', noteApp(`app${i}`), (_found, next) => [{ kind: sessionIndex, key: `u/upd/${(next as { apps: string[] }).apps.length}`, value: 's-upd' }]),
      );
      expect((await nodes.b.get(sessions, 's-upd'))?.apps).toHaveLength(10);
      expect(await nodes.b.range(sessionIndex, 'u/upd/')).toHaveLength(10);
      expect(await nodes.a.update(sessions, 's-upd', () => undefined)).toEqual(await nodes.b.get(sessions, 's-upd'));
      expect(await nodes.a.update(sessions, 's-upd', () => null)).toBeUndefined();
      expect(await nodes.b.get(sessions, 's-upd')).toBeUndefined();
    });

    it('insertBounded: a group keeps at most its bound under 12 inserts at once, and a take leaves its place', async () => {
      const group = { index: pushedIndex, name: 'client-1', max: 3 };
      await atOnce(nodes, 12, (store, i) => store.insertBounded(pushed, `par-${i}`, (slot) => ({ id: `par-${i}`, slot }), group));
      const places = await nodes.a.range(pushedIndex, 'client-1/');
      expect(places).toHaveLength(3);
      const kept = await Promise.all(places.map((place) => nodes.b.get(pushed, place.value as string)));
      expect(kept.every((record) => record !== undefined)).toBe(true);
      const all = await Promise.all(Array.from({ length: 12 }, (_, i) => nodes.a.get(pushed, `par-${i}`)));
      expect(all.filter((record) => record !== undefined)).toHaveLength(3);
      expect(await nodes.a.get(pushedIndex, 'client-1#')).toMatchObject({ next: 12, size: 3 });

      const taken = await nodes.b.takeOnce(pushed, kept[0]!.id, (found) => (found.slot ? [{ leaveGroup: pushedIndex, slot: found.slot }] : []));
      expect(taken?.id).toBe(kept[0]!.id);
      expect(await nodes.a.get(pushedIndex, 'client-1#')).toMatchObject({ size: 2 });
      expect(await nodes.a.range(pushedIndex, 'client-1/')).toHaveLength(2);
    });

    it('insertGuarded: a bound counted in the store holds under 12 inserts at once, and a taken key is never taken twice', async () => {
      const index = recordKind<string>('deviceAuthorizationIndex');
      const range = { start: 'client-g/', end: 'client-g/\uffff' };
      const outcomes = await atOnce(nodes, 12, (store, i) =>
        store.insertGuarded({ atMost: { kind: index, range, max: 5 } }, [
          { kind: index, key: `client-g/${String(i).padStart(3, '0')}`, value: `d${i}` },
          { kind: pushed, key: `guarded-${i}`, value: { id: `guarded-${i}` } },
        ]),
      );
      expect(outcomes.filter((o) => o === 'written')).toHaveLength(5);
      expect(outcomes.filter((o) => o === 'full')).toHaveLength(7);
      expect(await nodes.a.count(index, range)).toBe(5);
      const written = outcomes.flatMap((o, i) => (o === 'written' ? [i] : []));
      for (let i = 0; i < 12; i++) expect(await nodes.b.get(pushed, `guarded-${i}`)).toEqual(written.includes(i) ? { id: `guarded-${i}` } : undefined);

      const taking = await atOnce(nodes, 8, (store, i) => store.insertGuarded({ absent: [{ kind: index, key: 'u/same-code' }] }, [{ kind: index, key: 'u/same-code', value: `owner-${i}` }]));
      expect(taking.filter((o) => o === 'written')).toHaveLength(1);
      expect(await nodes.a.get(index, 'u/same-code')).toBe(`owner-${taking.indexOf('written')}`);
      expect(await nodes.a.insertGuarded({ absent: [{ kind: index, key: 'u/same-code' }] }, [{ kind: pushed, key: 'x', value: { id: 'x' } }])).toBe('taken');
      expect(await nodes.a.get(pushed, 'x')).toBeUndefined();
    });

    it('sweep: removes what has expired, with what goes with it, and keeps what was renewed', async () => {
      const kept = recordKind<{ exp: number }>('authRequests');
      for (let i = 0; i < 30; i++) {
        await nodes.a.put(kept, `r${String(i).padStart(2, '0')}`, { exp: i < 20 ? 10 : 1_000 });
        await nodes.a.put(sessionIndex, `sweep/r${String(i).padStart(2, '0')}`, 'x');
      }
      const removed = await nodes.b.sweep(
        kept,
        (record) => record.exp < 100,
        (key) => [{ kind: sessionIndex, key: `sweep/${key}`, value: null }],
      );
      expect(removed).toBe(20);
      expect(await nodes.a.count(kept)).toBe(10);
      expect(await nodes.a.range(sessionIndex, 'sweep/')).toHaveLength(10);
      // Without `also`: binary keys too.
      await nodes.a.put(tokens, new Uint8Array(32).fill(1), { sub: 'old' });
      await nodes.a.put(tokens, new Uint8Array(32).fill(2), { sub: 'new' });
      expect(await nodes.b.sweep(tokens, (t) => t.sub === 'old')).toBe(1);
      expect(await nodes.a.get(tokens, new Uint8Array(32).fill(1))).toBeUndefined();
      expect(await nodes.a.get(tokens, new Uint8Array(32).fill(2))).toEqual({ sub: 'new' });
    });

    it('lease: one holder among many at once; free again once expired, and its holder extends it', async () => {
      const results = await atOnce(nodes, 8, (store, i) => store.lease(leases, 'sweeper', `node-${i}`, 1_000, 61_000));
      expect(results.filter(Boolean)).toHaveLength(1);
      const holder = `node-${results.indexOf(true)}`;
      expect(await nodes.a.lease(leases, 'sweeper', holder, 30_000, 90_000)).toBe(true);
      expect(await nodes.b.lease(leases, 'sweeper', 'someone-else', 60_000, 120_000)).toBe(false);
      expect(await nodes.b.lease(leases, 'sweeper', 'someone-else', 90_000, 150_000)).toBe(true);
      expect(await nodes.a.get(leases, 'sweeper')).toEqual({ holder: 'someone-else', until: 150_000 });
    });
  });
}

let lmdbDir: string;
let storage: Storage;
contract(
  'LMDB',
  async () => {
    lmdbDir = mkdtempSync(join(tmpdir(), 'sesame-store-port-'));
    storage = openStorage(lmdbDir, 'commit');
    return { a: storage.records, b: storage.records };
  },
  async () => {
    await storage.close();
    rmSync(lmdbDir, { recursive: true, force: true });
  },
);

let pgNodes: Nodes;
contract(
  'PostgreSQL',
  async () => {
    const url = await (await postgresCluster()).database('store_port');
    const settings = { url, ...POSTGRES_DEFAULTS };
    pgNodes = { a: await openPostgresStore(settings), b: await openPostgresStore(settings) };
    return pgNodes;
  },
  async () => {
    await pgNodes.a.close();
    await pgNodes.b.close();
  },
);

describe('PostgreSQL schema migrations', () => {
  let url: string;
  beforeAll(async () => {
    url = await (await postgresCluster()).database('migrations');
  });

  it('apply once, whichever of several nodes starting together gets the lock; a second start finds nothing to do', async () => {
    const clients = [new pg.Client(url), new pg.Client(url), new pg.Client(url)];
    await Promise.all(clients.map((client) => client.connect()));
    try {
      const results = await Promise.all(clients.map((client) => migrate(client)));
      expect(results.flatMap((r) => r.applied)).toEqual(MIGRATIONS.map((m) => m.version));
      expect(results.every((r) => r.version === MIGRATIONS.at(-1)!.version)).toBe(true);
      expect((await migrate(clients[0]!)).applied).toEqual([]);
      const { rows } = await clients[0]!.query('SELECT version FROM sesame_schema ORDER BY version');
      expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
    } finally {
      await Promise.all(clients.map((client) => client.end()));
    }
  });

  it('a database migrated by a newer Sesame is refused, and a failing migration leaves nothing behind', async () => {
    const client = new pg.Client(url);
    await client.connect();
    try {
      await client.query(`INSERT INTO sesame_schema (version, name) VALUES (999, 'from a newer build')`);
      await expect(migrate(client)).rejects.toBeInstanceOf(SchemaTooNew);
      await client.query('DELETE FROM sesame_schema WHERE version = 999');
      const broken = [...MIGRATIONS, { version: 1000, name: 'broken', sql: 'CREATE TABLE half_done (x int); SELECT no_such_function();' }];
      await expect(migrate(client, broken)).rejects.toThrow(/no_such_function/);
      const { rows } = await client.query(`SELECT to_regclass('half_done') AS t, (SELECT max(version) FROM sesame_schema) AS v`);
      expect(rows[0]).toEqual({ t: null, v: MIGRATIONS.at(-1)!.version });

      // A destructive migration waits for the operator's word (sesame migrate --allow-destructive); a start never applies it.
      const destructive = [...MIGRATIONS, { version: 1001, name: 'drop the records', sql: 'CREATE TABLE dropped_marker (x int)', destructive: true as const }];
      await expect(migrate(client, destructive)).rejects.toBeInstanceOf(DestructiveMigrationPending);
      expect((await client.query(`SELECT to_regclass('dropped_marker') AS t`)).rows[0]).toEqual({ t: null });
      expect(await migrate(client, destructive, { allowDestructive: true })).toEqual({ version: 1001, applied: [1001] });
      expect((await client.query(`SELECT to_regclass('dropped_marker') AS t`)).rows[0]).toEqual({ t: 'dropped_marker' });
    } finally {
      await client.end();
    }
  });
});
