import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newFeedCells, PostgresChangeFeed } from '../../src/storage/postgres/change-feed.js';
import { postgresCluster } from '../helpers/postgres.js';

/**
 * The change feed across nodes (NOTIFY/LISTEN): an announcement on one node wakes the waiters of
 * another; a node whose listening connection is cut listens again by itself and wakes its waiters
 * (what was announced meanwhile is lost on the wire, and found in the store).
 */
let url: string;
let pools: pg.Pool[] = [];
const feeds: PostgresChangeFeed[] = [];

/** A node's feed, its listening connection named so a test can cut it. */
async function node(name: string): Promise<PostgresChangeFeed> {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pools.push(pool);
  const feed = new PostgresChangeFeed(pool, () => new pg.Client({ connectionString: url, application_name: name }));
  await feed.start();
  feeds.push(feed);
  return feed;
}

beforeAll(async () => {
  url = await (await postgresCluster()).database('change_feed');
});

afterAll(async () => {
  await Promise.all(feeds.map((feed) => feed.close()));
  await Promise.all(pools.map((pool) => pool.end()));
  pools = [];
});

describe('the change feed on PostgreSQL', () => {
  it('an announcement on node A wakes a waiter on node B; without one, a wait ends at its timeout unchanged', async () => {
    const [a, b] = [await node('feed-a'), await node('feed-b')];
    const seen = b.version('outbox');
    expect(await b.after('outbox', seen, 20)).toBe(seen);
    const woken = b.after('outbox', seen, 60_000);
    a.announce('outbox');
    expect(await woken).toBeGreaterThan(seen);
    // A's own waiters are woken at once, without the round trip.
    const own = a.version('outbox');
    a.announce('outbox');
    expect(a.version('outbox')).toBeGreaterThan(own);
  });

  it('a node whose listening connection is cut listens again by itself, wakes its waiters, and hears the next announcement', async () => {
    const [a, b] = [await node('feed-c'), await node('feed-d')];
    const seen = b.version('outbox');
    const woken = b.after('outbox', seen, 60_000);
    const admin = new pg.Client(url);
    await admin.connect();
    try {
      const { rowCount } = await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'feed-d'`);
      expect(rowCount).toBe(1);
      // Woken by listening again (nothing was announced).
      expect(await woken).toBeGreaterThan(seen);
      const { rows } = await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'feed-d' AND query LIKE 'LISTEN%'`);
      expect(rows[0].n).toBe(1);
    } finally {
      await admin.end();
    }
    const now = b.version('outbox');
    const next = b.after('outbox', now, 60_000);
    a.announce('outbox');
    expect(await next).toBeGreaterThan(now);
  });

  it("a node's other threads hear through its one listener: woken by another node's announcement, its listening state theirs, a closed feed's waiters returned", async () => {
    const a = await node('feed-e');
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    pools.push(pool);
    const cells = newFeedCells();
    // One process: a listening thread and a thread that reads the same cells (Atomics.waitAsync works within one thread too).
    const listening = new PostgresChangeFeed(pool, () => new pg.Client({ connectionString: url, application_name: 'feed-f' }), cells, true);
    const reading = new PostgresChangeFeed(
      pool,
      () => {
        throw new Error('a feed that does not listen opens no connection');
      },
      cells,
      false,
    );
    await listening.start();
    await reading.start();
    feeds.push(listening, reading);
    expect(reading.connection()).toEqual(listening.connection());
    expect(reading.connection().listening).toBe(true);
    const seen = reading.version('directory');
    const woken = reading.after('directory', seen, 60_000);
    a.announce('directory');
    expect(await woken).toBeGreaterThan(seen);
    // An announcement by the reading thread reaches the other node too.
    const onA = a.version('outbox');
    const heard = a.after('outbox', onA, 60_000);
    reading.announce('outbox');
    expect(await heard).toBeGreaterThan(onA);
    // No change: the wait ends at its timeout.
    expect(await reading.after('directory', reading.version('directory'), 20)).toBe(reading.version('directory'));
    const pending = reading.after('directory', reading.version('directory'), 60_000);
    await listening.close();
    expect(reading.connection().listening).toBe(false);
    await reading.close();
    await pending;
  });
});
