import type pg from 'pg';

/**
 * Sesame's schema on PostgreSQL, as numbered migrations applied in order, each once, in its own
 * transaction, under an advisory lock so that nodes starting together apply each one once (the others
 * wait, then find it applied). A database whose schema is newer than this build knows is refused:
 * an older node must not write rows it does not understand (upgrade node by node: the new build
 * migrates, then the old nodes stop). Migrations only add; one that would drop data is a new
 * table plus a copy, never a `DROP` of what an older node still reads.
 */
export interface Migration {
  version: number;
  /** What it adds, for the log and the `sesame_schema` table. */
  name: string;
  sql: string;
  /**
   * Drops or rewrites what an older node still reads: applied only when asked for explicitly
   * (`sesame migrate --allow-destructive`, once every node runs a build that no longer needs it),
   * never by a node's start.
   */
  destructive?: true;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'records: the state every node shares (tokens, codes, refresh families, sessions, sign-ins, guards, leases)',
    sql: `
      CREATE TABLE sesame_records (
        kind text NOT NULL,
        key bytea NOT NULL,
        -- msgpack, as LMDB stores it (so a data dir copies over byte for byte)
        value bytea NOT NULL,
        -- moves on every change: the compare-and-set of a decision made from a read
        version bigint NOT NULL DEFAULT 1,
        -- the number raiseTo compares (revocations: until when they are kept)
        n bigint,
        PRIMARY KEY (kind, key)
      );
    `,
  },
  {
    version: 2,
    name: 'directory: orgs, users, projects, apps, grants, keys and settings, their unique keys and change feed',
    sql: `
      CREATE TABLE sesame_directory (
        store text NOT NULL,
        id text NOT NULL,
        -- msgpack, as LMDB stores it
        value bytea NOT NULL,
        -- the row's own sequence: what a commit compares with the version its writer read
        sequence bigint,
        PRIMARY KEY (store, id)
      );
      CREATE TABLE sesame_unique_keys (
        key text PRIMARY KEY,
        owner text NOT NULL
      );
      -- Which directory rows each commit changed, numbered in commit order (directory commits take
      -- turns under an advisory lock): what every node's copy takes in.
      CREATE TABLE sesame_directory_changes (
        seq bigint PRIMARY KEY,
        store text NOT NULL,
        id text NOT NULL,
        at bigint NOT NULL
      );
      CREATE TABLE sesame_directory_pruned (
        one boolean PRIMARY KEY DEFAULT true CHECK (one),
        through bigint NOT NULL
      );
      INSERT INTO sesame_directory_pruned (through) VALUES (0);
    `,
  },
  {
    version: 3,
    name: "unique keys compared byte by byte, so an owner's keys (starts_with, a prefix) are a range of the index whatever the database's collation",
    // Under a language collation (en_US.UTF-8, most servers' default) PostgreSQL cannot make a
    // prefix an index range: a scan of every key.
    sql: `ALTER TABLE sesame_unique_keys ALTER COLUMN key TYPE text COLLATE "C";`,
  },
  {
    version: 4,
    name: 'activity log: events written in the transactions of the changes they describe',
    sql: `
      CREATE TABLE sesame_activity (
        -- numbered in commit order: appends take turns under an advisory lock (postgres/activity.ts)
        seq bigint PRIMARY KEY,
        at bigint NOT NULL,
        type text NOT NULL,
        aggregate_type text NOT NULL,
        aggregate_id text NOT NULL,
        resource_owner text NOT NULL,
        object_id text,
        editor text NOT NULL,
        service text NOT NULL,
        address text,
        payload jsonb
      );
      CREATE INDEX sesame_activity_aggregate ON sesame_activity (aggregate_id, seq);
      CREATE INDEX sesame_activity_editor ON sesame_activity (editor, seq);
      CREATE INDEX sesame_activity_at ON sesame_activity (at);
      CREATE TABLE sesame_activity_pruned (
        one boolean PRIMARY KEY DEFAULT true CHECK (one),
        through bigint NOT NULL
      );
      INSERT INTO sesame_activity_pruned (through) VALUES (0);
    `,
  },
];

/** Any constant: the advisory lock nodes take to migrate one at a time. */
const MIGRATION_LOCK = 0x5e5a3e01;

export class SchemaTooNew extends Error {}

/** A destructive migration is pending and was not allowed: nothing of it (or after it) was applied. */
export class DestructiveMigrationPending extends Error {}

/** Applies what this database lacks; resolves with the schema version it is at now. */
export async function migrate(client: pg.ClientBase, migrations: readonly Migration[] = MIGRATIONS, options: { allowDestructive?: boolean } = {}): Promise<{ version: number; applied: number[] }> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS sesame_schema (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM sesame_schema');
    const current = rows[0]?.version ?? 0;
    const newest = migrations.at(-1)?.version ?? 0;
    if (current > newest) throw new SchemaTooNew(`the database's schema is at version ${current}, this Sesame knows up to ${newest}: upgrade this node`);
    const applied: number[] = [];
    for (const migration of migrations) {
      if (migration.version <= current) continue;
      if (migration.destructive && !options.allowDestructive) {
        throw new DestructiveMigrationPending(
          `schema migration ${migration.version} (${migration.name}) drops data older nodes may read: once every node runs this build, apply it with sesame migrate --allow-destructive`,
        );
      }
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO sesame_schema (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
      applied.push(migration.version);
    }
    return { version: applied.at(-1) ?? current, applied };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
  }
}
