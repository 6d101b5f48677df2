import pg from 'pg';
import { DestructiveMigrationPending, migrate, SchemaTooNew } from '../storage/postgres/migrations.js';
import { parseArgs, last, envValue } from './args.js';
import { usage, failure } from './errors.js';
import { HELP } from './help.js';

/**
 * `sesame migrate`: brings a PostgreSQL database's schema up to this build's, under the same lock
 * a node's start takes (what a start does by itself; run it first to upgrade a cluster before any
 * node restarts, or with --allow-destructive for a migration that drops what older nodes read).
 * Prints the schema version and what was applied.
 */
export async function migrateCommand(argv: string[]): Promise<void> {
  const p = parseArgs(argv, ['--database-url'], ['--allow-destructive']);
  if (p.flags.has('--help')) return void process.stdout.write(HELP.migrate!);
  if (p.positional.length) throw usage(`unexpected argument ${p.positional[0]} (see sesame migrate --help)`);
  if (p.rest.length) throw usage(`unknown option ${p.rest[0]} (see sesame migrate --help)`);
  const url = last(p, '--database-url') ?? envValue('SESAME_DATABASE_URL');
  if (!url) throw usage('--database-url (or SESAME_DATABASE_URL) is required: the PostgreSQL database to migrate');
  const client = new pg.Client({ connectionString: url, application_name: 'sesame migrate' });
  // A connection lost meanwhile is reported as the command's failure (the client's own event would be unhandled).
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { version, applied } = await migrate(client, undefined, { allowDestructive: p.flags.has('--allow-destructive') });
    process.stdout.write(`schema version ${version}${applied.length ? ` (applied ${applied.join(', ')})` : ' (nothing to apply)'}\n`);
  } catch (error) {
    if (error instanceof SchemaTooNew || error instanceof DestructiveMigrationPending) throw failure(error.message);
    throw failure(`could not migrate the database: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
