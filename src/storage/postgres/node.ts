import pg from 'pg';
import type { NodeStorage } from '../db.js';
import type { Config } from '../../config.js';
import { DIRECTORY_STORES } from '../directory-log.js';
import { PostgresChangeFeed } from './change-feed.js';
import { connectionConfig, openPool, type PostgresSettings } from './connection.js';
import { PostgresDirectory, PostgresDirectoryReader, postgresDirectoryStorage } from './directory.js';
import type { StorePool } from './pool.js';
import { PostgresStore } from './postgres-store.js';

/** The settings of SESAME_DATABASE_URL and the pool settings beside it. */
export function postgresSettingsOf(config: Pick<Config, 'databaseUrl' | 'databasePoolSize' | 'databaseConnectTimeout' | 'databaseStatementTimeout'>): PostgresSettings {
  return { url: config.databaseUrl!, poolSize: config.databasePoolSize, connectTimeoutMs: config.databaseConnectTimeout, statementTimeoutMs: config.databaseStatementTimeout };
}

/** Any constant: the advisory lock a node holds while it starts (master key check, bootstrap, first signing key). */
const START_LOCK = 0x5e5a3e03;

/**
 * A Sesame node's storage on PostgreSQL (SESAME_DATABASE_URL): every decision in the database
 * (PostgresStore, PostgresDirectory), the directory read from what was fetched (the reader, kept
 * current by FollowedOnPostgres), and the change feed on a LISTEN connection of its own.
 */
export interface PostgresNode extends NodeStorage {
  readonly pool: StorePool;
  readonly directory: PostgresDirectory;
  readonly reader: PostgresDirectoryReader;
  readonly changeFeed: PostgresChangeFeed;
  /** The directory's change feed position the reader was last loaded whole at (what a follower starts after). */
  loadedThrough(): number;
  /**
   * The last feed number any thread of this process committed: a thread whose copies are behind it
   * looks at the database before it answers, so a change is seen by the next request to this node,
   * whichever thread serves it (what LMDB's shared version gives its threads).
   */
  committedThrough(): number;
  /**
   * Runs `work` while no other node is in its own start (a session advisory lock), with the
   * directory loaded again first: the master key check, the bootstrap and the first signing key
   * happen once, whichever node starts first, and a node that waited sees what the first one made.
   */
  inStartTurn<T>(work: () => Promise<T>): Promise<T>;
}

/** The memory a process's threads share for `committedThrough` (handed to each thread's openPostgresNode). */
export function newCommittedThrough(): SharedArrayBuffer {
  return new SharedArrayBuffer(BigInt64Array.BYTES_PER_ELEMENT);
}

export async function openPostgresNode(settings: PostgresSettings, shared: SharedArrayBuffer = newCommittedThrough()): Promise<PostgresNode> {
  const pool = await openPool(settings);
  const committed = new BigInt64Array(shared);
  const directory = new PostgresDirectory(pool, (through) => {
    // The highest wins, whichever thread's commit answered first.
    for (let seen = Atomics.load(committed, 0); seen < BigInt(through); seen = Atomics.load(committed, 0)) {
      if (Atomics.compareExchange(committed, 0, seen, BigInt(through)) === seen) break;
    }
  });
  const reader = new PostgresDirectoryReader(directory);
  const changeFeed = new PostgresChangeFeed(pool, () => new pg.Client(connectionConfig(settings)));
  let through: number;
  const loadWhole = async () => {
    // The position first: what is logged after it is taken again by the follower (harmless).
    through = await directory.last();
    await reader.load(DIRECTORY_STORES);
  };
  try {
    await loadWhole();
    await changeFeed.start();
  } catch (error) {
    await changeFeed.close();
    await pool.end();
    throw error;
  }
  const store = new PostgresStore(pool);
  const directoryStorage = postgresDirectoryStorage(directory, reader);
  return {
    ...directoryStorage,
    records: store,
    feed: changeFeed,
    pool,
    directory,
    reader,
    changeFeed,
    loadedThrough: () => through,
    committedThrough: () => Number(Atomics.load(committed, 0)),
    async inStartTurn<T>(work: () => Promise<T>): Promise<T> {
      const client = await pool.connect();
      try {
        await client.query('SELECT pg_advisory_lock($1)', [START_LOCK]);
        try {
          await loadWhole();
          directoryStorage.meta.reload();
          return await work();
        } finally {
          await client.query('SELECT pg_advisory_unlock($1)', [START_LOCK]).catch(() => undefined);
        }
      } finally {
        client.release();
      }
    },
    async close() {
      await changeFeed.close();
      await store.close();
    },
  };
}
