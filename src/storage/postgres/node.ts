import pg from 'pg';
import type { NodeStorage } from '../db.js';
import type { Config } from '../../config.js';
import { StoreUnavailable } from '../../model/errors.js';
import { DIRECTORY_STORES } from '../directory-log.js';
import { FEED_CELLS, PostgresChangeFeed } from './change-feed.js';
import { connectionConfig, openPool, PIPELINED_LANES, type PostgresSettings } from './connection.js';
import { PostgresDirectory, PostgresDirectoryReader, postgresDirectoryStorage } from './directory.js';
import { storeError, type StorePool } from './pool.js';
import { PostgresActivityLog } from './activity.js';
import { PostgresStore } from './postgres-store.js';

/**
 * One HTTP thread's settings of SESAME_DATABASE_URL and the pool settings beside it. The pool size
 * is the node's: each thread keeps its share (at least one), so that a node on many cores does not
 * open the setting's connections once per core (16 threads × 10 took 160 connections for
 * transactions alone, more than PostgreSQL's default max_connections).
 */
export function postgresSettingsOf(config: Pick<Config, 'databaseUrl' | 'databasePoolSize' | 'databaseConnectTimeout' | 'databaseStatementTimeout' | 'httpThreads'>): PostgresSettings {
  return {
    url: config.databaseUrl!,
    poolSize: Math.max(1, Math.ceil(config.databasePoolSize / config.httpThreads)),
    connectTimeoutMs: config.databaseConnectTimeout,
    statementTimeoutMs: config.databaseStatementTimeout,
  };
}

/**
 * The connections a node opens at most on PostgreSQL: each thread's share of the pool and its
 * pipelined lanes, the node's one LISTEN connection, and the one that holds the start turn while it starts.
 */
export function nodeConnections(config: Pick<Config, 'databasePoolSize' | 'httpThreads'>): number {
  return config.httpThreads * (Math.max(1, Math.ceil(config.databasePoolSize / config.httpThreads)) + PIPELINED_LANES) + 2;
}

/**
 * Why a node could not open the database, for the operator: the server's own words (a 503's
 * message hides them from clients), and for "too many clients" what this node asks for.
 */
export function openFailureOf(error: unknown, config: Pick<Config, 'databasePoolSize' | 'httpThreads'>): string {
  const said = error instanceof StoreUnavailable ? error.detail : error instanceof Error ? error.message : String(error);
  if (!/too many (clients|connections)|remaining connection slots/i.test(said)) return said;
  return `${said} (this node opens up to ${nodeConnections(config)} connections: per HTTP thread its share of SESAME_DATABASE_POOL_SIZE and ${PIPELINED_LANES} pipelined, 1 listening and 1 while it starts; raise the server's max_connections, or lower SESAME_HTTP_THREADS or SESAME_DATABASE_POOL_SIZE)`;
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
  /** The position this process's threads share (see NodePosition). */
  readonly position: NodePosition;
  /**
   * Runs `work` while no other node is in its own start (a session advisory lock), with the
   * directory loaded again first: the master key check, the bootstrap and the first signing key
   * happen once, whichever node starts first, and a node that waited sees what the first one made.
   */
  inStartTurn<T>(work: () => Promise<T>): Promise<T>;
}

/**
 * The directory's change feed position a process's threads share: the last feed number any of
 * them committed or took into its copies. A thread whose copies are behind it looks at the
 * database before it answers, so a node answers as one: what one request changed, or saw, every
 * later request to this node sees, whichever thread serves it (what LMDB's shared version gives
 * its threads). Without it a change made on another node could be seen by one of this node's
 * threads and then missed by the next request, served by a thread not notified yet.
 */
export interface NodePosition {
  through(): number;
  /** The highest wins, whichever thread got there first. */
  reached(through: number): void;
}

/**
 * The memory a process's threads share (handed to each thread's openPostgresNode): their
 * NodePosition, then the change feed's cells (one thread listens for the node, see PostgresChangeFeed).
 */
export function newNodeShared(): SharedArrayBuffer {
  return new SharedArrayBuffer(BigInt64Array.BYTES_PER_ELEMENT + FEED_CELLS * Int32Array.BYTES_PER_ELEMENT);
}

function feedCellsIn(shared: SharedArrayBuffer): Int32Array {
  return new Int32Array(shared, BigInt64Array.BYTES_PER_ELEMENT, FEED_CELLS);
}

function nodePositionIn(shared: SharedArrayBuffer): NodePosition {
  const cell = new BigInt64Array(shared, 0, 1);
  return {
    through: () => Number(Atomics.load(cell, 0)),
    reached(through) {
      for (let seen = Atomics.load(cell, 0); seen < BigInt(through); seen = Atomics.load(cell, 0)) {
        if (Atomics.compareExchange(cell, 0, seen, BigInt(through)) === seen) break;
      }
    },
  };
}

/**
 * `listens`: this thread keeps the node's LISTEN connection (the main thread); the others read
 * what it heard from the shared memory.
 */
export async function openPostgresNode(settings: PostgresSettings, shared: SharedArrayBuffer = newNodeShared(), listens = true): Promise<PostgresNode> {
  const pool = await openPool(settings);
  const position = nodePositionIn(shared);
  const directory = new PostgresDirectory(pool, position.reached);
  const reader = new PostgresDirectoryReader(directory);
  const changeFeed = new PostgresChangeFeed(pool, () => new pg.Client(connectionConfig(settings)), feedCellsIn(shared), listens);
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
  const activity = new PostgresActivityLog(pool);
  const directoryStorage = postgresDirectoryStorage(directory, reader);
  return {
    ...directoryStorage,
    records: store,
    activity,
    feed: changeFeed,
    pool,
    directory,
    reader,
    changeFeed,
    loadedThrough: () => through,
    position,
    async inStartTurn<T>(work: () => Promise<T>): Promise<T> {
      // A connection of its own, not the pool's: `work` commits through the pool, which may be
      // one connection (a thread's share of SESAME_DATABASE_POOL_SIZE).
      const client = new pg.Client(connectionConfig(settings));
      try {
        await client.connect();
      } catch (error) {
        throw storeError(error);
      }
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
        await client.end().catch(() => undefined);
      }
    },
    async close() {
      await changeFeed.close();
      await store.close();
    },
  };
}
