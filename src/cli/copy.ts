import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { DataDirInUseError, lockDataDir } from '../storage/data-dir-lock.js';
import { openStorage, type Storage } from '../storage/db.js';
import { copyDataDirToPostgres, copyPostgresToDataDir, TargetNotEmpty } from '../storage/postgres/copy.js';
import { SchemaTooNew } from '../storage/postgres/migrations.js';
import { parseArgs, last, envValue } from './args.js';
import { usage, failure } from './errors.js';
import { HELP } from './help.js';

/**
 * `sesame copy`: an LMDB data dir into an empty PostgreSQL database (what a team runs once to grow
 * from one node to many), offline: the data dir's lock is taken, so a server holding it is refused.
 * Prints what was copied per store on stdout, and what every node on the database needs on stderr.
 */
export async function copyCommand(argv: string[]): Promise<void> {
  const p = parseArgs(argv, ['--data-dir', '--database-url'], ['--from-database']);
  if (p.flags.has('--help')) return void process.stdout.write(HELP.copy!);
  if (p.positional.length) throw usage(`unexpected argument ${p.positional[0]} (see sesame copy --help)`);
  if (p.rest.length) throw usage(`unknown option ${p.rest[0]} (see sesame copy --help)`);
  const dataDir = resolve(last(p, '--data-dir') ?? envValue('SESAME_DATA_DIR') ?? './data');
  const url = last(p, '--database-url') ?? envValue('SESAME_DATABASE_URL');
  const back = p.flags.has('--from-database');
  if (!url) throw usage(`--database-url (or SESAME_DATABASE_URL) is required: the ${back ? 'PostgreSQL database to copy from' : 'empty PostgreSQL database to copy into'}`);
  if (back) return copyBack(dataDir, url);
  if (!existsSync(join(dataDir, 'sesame.lmdb'))) throw usage(`data dir ${dataDir} holds no Sesame data (no sesame.lmdb): check --data-dir`);
  await withDataDirAndDatabase(dataDir, url, 'stop it first (the copy is taken offline)', async (storage, pool) => {
    try {
      const { copied } = await copyDataDirToPostgres(storage, pool);
      printCopied(copied);
      const keyFile = join(dataDir, 'masterkey');
      process.stderr.write(
        `sesame: copy: copied ${dataDir} into the database. Every node on it needs this data dir's master key: ${existsSync(keyFile) ? `the file ${keyFile}, or ` : ''}the SESAME_MASTERKEY it was started with\n`,
      );
    } catch (error) {
      if (error instanceof TargetNotEmpty) throw failure(error.message);
      throw failure(`could not copy into the database: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
}

/** `sesame copy --from-database`: the database into a new, empty data dir (back to one node). */
async function copyBack(dataDir: string, url: string): Promise<void> {
  await withDataDirAndDatabase(dataDir, url, 'copy into a new, empty data dir', async (storage, pool) => {
    try {
      const { copied } = await copyPostgresToDataDir(pool, storage);
      printCopied(copied);
      process.stderr.write(`sesame: copy: copied the database into ${dataDir}. Start Sesame on it with the master key the nodes had: SESAME_MASTERKEY, or the key in ${join(dataDir, 'masterkey')}\n`);
    } catch (error) {
      if (error instanceof TargetNotEmpty || error instanceof SchemaTooNew) throw failure(error.message);
      throw failure(`could not copy from the database: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
}

/**
 * Runs `copy` with the data dir locked (a running server holding it is refused, `inUse` saying what
 * to do) and open, and a one-connection pool on the database; all closed afterwards.
 */
async function withDataDirAndDatabase(dataDir: string, url: string, inUse: string, copy: (storage: Storage, pool: pg.Pool) => Promise<void>): Promise<void> {
  let lock;
  try {
    lock = await lockDataDir(dataDir);
  } catch (error) {
    if (error instanceof DataDirInUseError) throw usage(`data dir ${dataDir} is in use by a running Sesame server: ${inUse}`);
    throw error;
  }
  const storage = openStorage(dataDir);
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  // An unreachable server is reported as the command's failure (the pool's own event would be unhandled).
  pool.on('error', () => undefined);
  try {
    await copy(storage, pool);
  } finally {
    await pool.end().catch(() => undefined);
    await storage.close();
    await lock.release();
  }
}

/** What was copied, a line per store: `<store>\t<rows>`. */
function printCopied(copied: Record<string, number>): void {
  for (const [store, count] of Object.entries(copied)) process.stdout.write(`${store}\t${count}\n`);
}
