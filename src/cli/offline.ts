import { instanceLifetimeLimits } from '../zitadel/oidc-config.js';
import { Transactions } from '../actors/transaction.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ClientsActor } from '../actors/clients.js';
import { KeysActor } from '../actors/keys.js';
import type { OrgsActor, InstanceInfo } from '../actors/orgs.js';
import { openDirectory, openMasterKey } from '../directory.js';
import type { Config } from '../config.js';
import { MigrationStore } from '../services/migration/store.js';
import type { MigrationServices } from '../services/migration/run.js';
import { DataDirInUseError, lockDataDir, type DataDirLock } from '../storage/data-dir-lock.js';
import { DataDirError, prepareDataDir } from '../storage/data-dir.js';
import { openStorage, type NodeStorage } from '../storage/db.js';
import { openFailureOf, openPostgresNode, postgresSettingsOf, type PostgresNode } from '../storage/postgres/node.js';
import type { MasterKey } from '../crypto/master-key.js';
import { CryptoPool } from '../workers/pool.js';

/**
 * A data dir opened without a server, for the offline commands (`sesame export|import|keys
 * rotate|admin-pat --data-dir …`): the data-dir lock first, so a dir a running server holds is
 * refused and nothing in it is touched; then storage, the master key check, the actors and the
 * instance as `startApp` sets them up (a fresh dir gets its instance as at a first start).
 *
 * With SESAME_DATABASE_URL the state is the database's, as for a node: the commands work on it
 * while the nodes run (every decision is the database's, and the nodes take the changes from its
 * change feed); the data dir holds only the master key file and admin.pat. The key check and a
 * bootstrap take the start turn, as a node's start does.
 */
export class OfflineError extends Error {
  constructor(
    message: string,
    /** 2 when the operator must change what was asked (another dir, --url), 1 otherwise. */
    readonly exitCode: 1 | 2,
    /** A running server holds the data dir. */
    readonly inUse = false,
  ) {
    super(message);
  }
}

export interface OfflineDir {
  readonly dataDir: string;
  readonly storage: NodeStorage;
  readonly orgs: OrgsActor;
  readonly clients: ClientsActor;
  readonly keys: KeysActor;
  readonly instance: InstanceInfo;
  readonly masterKey: MasterKey;
  /** Whether this open created the instance (the dir was empty). */
  readonly created: boolean;
  readonly migration: MigrationServices;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** An empty or missing dir is set up as at a first start (import); otherwise it is refused. */
  create: boolean;
  /** The signing algorithm was set (flag or environment); otherwise the one the dir signs with is kept. */
  signingAlgSet: boolean;
}

export async function openDataDir(config: Config, options: OpenOptions): Promise<OfflineDir> {
  const { dataDir } = config;
  const onDatabase = config.databaseUrl !== undefined;
  if (!onDatabase && !options.create && !existsSync(join(dataDir, 'sesame.lmdb'))) {
    throw new OfflineError(`data dir ${dataDir} holds no Sesame data (no sesame.lmdb): check --data-dir`, 2);
  }
  if (!options.create && !config.masterKey && !existsSync(join(dataDir, 'masterkey'))) {
    throw new OfflineError(`data dir ${dataDir} has no masterkey file: give the server's SESAME_MASTERKEY (or --master-key)`, 2);
  }
  try {
    prepareDataDir(dataDir);
  } catch (error) {
    if (error instanceof DataDirError) throw new OfflineError(`data dir ${JSON.stringify(dataDir)}: ${error.reason}`, 2);
    throw error;
  }
  let lock: DataDirLock;
  try {
    lock = await lockDataDir(dataDir);
  } catch (error) {
    if (error instanceof DataDirInUseError) {
      throw new OfflineError(`data dir ${dataDir} is in use by a running Sesame server`, 2, true);
    }
    throw error;
  }
  let storage: NodeStorage | undefined;
  let keys: KeysActor | undefined;
  let pool: CryptoPool | undefined;
  try {
    let inStartTurn = <T>(work: () => Promise<T>) => work();
    if (onDatabase) {
      let node: PostgresNode;
      try {
        node = await openPostgresNode(postgresSettingsOf({ ...config, httpThreads: 1 }));
      } catch (error) {
        throw new OfflineError(`SESAME_DATABASE_URL (--database-url): cannot open the database: ${openFailureOf(error, { ...config, httpThreads: 1 })}`, 2);
      }
      storage = node;
      inStartTurn = (work) => node.inStartTurn(work);
    } else {
      storage = openStorage(dataDir, config.durability);
    }
    const opening = storage;
    const { masterKey, directory } = await inStartTurn(async () => {
      const masterKey = await openMasterKey(opening, config);
      const alg = options.signingAlgSet ? config.signingAlg : (KeysActor.activeAlg(opening.directoryReader) ?? config.signingAlg);
      const directory = await openDirectory(opening, masterKey, config, { issuer: config.issuer ?? `http://localhost:${config.port}`, signingAlg: alg });
      return { masterKey, directory };
    });
    const { orgs, clients, instance, created: fresh } = directory;
    keys = directory.keys;
    // The timer is for servers: an offline command rotates only when asked.
    keys.stop();
    const opened = storage;
    const keysActor = keys;
    return {
      dataDir,
      storage,
      orgs,
      clients,
      keys,
      instance,
      masterKey,
      created: fresh,
      migration: {
        lifetimeLimits: instanceLifetimeLimits(config),
        managementProjectId: instance.managementProjectId,
        orgs,
        clients,
        masterKey,
        migration: new MigrationStore(new Transactions(storage), orgs, clients),
        // Password hashing runs on worker threads as in the server; started only when an import needs it.
        hashPassword: (password) => (pool ??= new CryptoPool(config.workers)).hashPasswordInBulk(password),
      },
      async close() {
        keysActor.stop();
        await pool?.close();
        await opened.close();
        await lock.release();
      },
    };
  } catch (error) {
    keys?.stop();
    await pool?.close().catch(() => {});
    await storage?.close().catch(() => {});
    await lock.release();
    throw error;
  }
}
