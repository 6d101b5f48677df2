import type pg from 'pg';
import { log } from '../../util/log.js';
import { migrate } from './migrations.js';
import { StorePool } from './pool.js';
import { PostgresStore } from './postgres-store.js';

/** How Sesame connects to PostgreSQL (SESAME_DATABASE_URL and the pool settings beside it). */
export interface PostgresSettings {
  /** `postgres://user:password@host:port/database?sslmode=…`, as node-postgres takes it. */
  url: string;
  /** Connections for transactions this thread's pool keeps at most (its share of the node's SESAME_DATABASE_POOL_SIZE). */
  poolSize: number;
  /** How long a request waits for a connection (pool full, or the server unreachable) before it fails. */
  connectTimeoutMs: number;
  /** How long one statement may run before the server cancels it. */
  statementTimeoutMs: number;
}

export const POSTGRES_DEFAULTS = { poolSize: 10, connectTimeoutMs: 5_000, statementTimeoutMs: 10_000 } as const;

/**
 * Connections that carry single statements pipelined, beside the pool (see StorePool): two keep
 * one busy while the other's answers are read; more gave nothing more on 2 cores.
 */
export const PIPELINED_LANES = 2;

/** One connection's settings (the pool's, and the change feed's own connection). */
export function connectionConfig(settings: PostgresSettings): pg.ClientConfig {
  return {
    connectionString: settings.url,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    statement_timeout: settings.statementTimeoutMs,
    application_name: 'sesame',
  };
}

/** The pool, with Sesame's schema brought up to date (under the migration lock). */
export async function openPool(settings: PostgresSettings): Promise<StorePool> {
  const pool = new StorePool({ ...connectionConfig(settings), max: settings.poolSize }, PIPELINED_LANES);
  // An idle connection the server dropped (a restart) is an event, not a crash: the pool connects again on demand.
  pool.on('error', (error) => log.warn('postgres connection lost', { error: error.message }));
  try {
    const client = await pool.connect();
    try {
      await migrate(client);
    } finally {
      client.release();
    }
  } catch (error) {
    await pool.end();
    throw error;
  }
  return pool;
}

/** The store port on a migrated pool of its own. */
export async function openPostgresStore(settings: PostgresSettings): Promise<PostgresStore> {
  return new PostgresStore(await openPool(settings));
}
