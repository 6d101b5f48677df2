import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';

/**
 * One LMDB environment per data dir, one named database per kind of record. Values are msgpack
 * (lmdb's msgpackr encoding). Writes use lmdb's batched asynchronous commits: every put issued in
 * one event-loop turn lands in one transaction, and its promise resolves once that is committed.
 */
const SCHEMA_VERSION = 1;

const STORES = [
  'meta',
  'orgs',
  'projects',
  'apps',
  'appKeys',
  'users',
  'machineKeys',
  'machineSecrets',
  'pats',
  'userGrants',
  'members',
  'signingKeys',
  // Browser sign-in (issue 4): org policies, user agents and their user sessions, codes, refresh families.
  'policies',
  'userSessions',
  'authCodes',
  'refreshFamilies',
  'revokedGrants',
  'revokedSessions',
] as const;
export type StoreName = (typeof STORES)[number];

export interface Storage {
  readonly root: RootDatabase;
  readonly stores: Record<StoreName, Database<any, string>>;
  /** Opaque access tokens keyed by the SHA-256 digest of the token. */
  readonly tokens: Database<any, Buffer>;
  /** Revoked JWT ids (jti) with their expiry, so revocation of a JWT costs one write, issuance none. */
  readonly revokedJwts: Database<number, string>;
  /** Assertions already used (replay key → exp), see ReplayGuardActor. */
  readonly usedAssertions: Database<number, string>;
  /**
   * Resolves once a write is durable: committed (survives a process crash) and, in `flush` mode,
   * also synced to disk (survives power loss). Responses that hand out state wait for this.
   */
  durable<T>(write: Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export type Durability = 'flush' | 'commit';

class StorageError extends Error {}

export function openStorage(dataDir: string, durability: Durability = 'flush'): Storage {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const root = open({
    path: join(dataDir, 'sesame.lmdb'),
    maxDbs: 32,
    // Large maps cost nothing until used; 64 GiB leaves room for big imports.
    mapSize: 64 * 1024 ** 3,
    encoding: 'msgpack',
    noMemInit: true,
  });
  const stores = Object.fromEntries(
    STORES.map((name) => [name, root.openDB<any, string>({ name, encoding: 'msgpack' })]),
  ) as Record<StoreName, Database<any, string>>;
  const tokens = root.openDB<any, Buffer>({ name: 'tokens', encoding: 'msgpack', keyEncoding: 'binary' });
  const revokedJwts = root.openDB<number, string>({ name: 'revokedJwts', encoding: 'msgpack' });
  const usedAssertions = root.openDB<number, string>({ name: 'usedAssertions', encoding: 'msgpack' });

  const stored = stores.meta.get('schemaVersion') as number | undefined;
  if (stored === undefined) {
    stores.meta.putSync('schemaVersion', SCHEMA_VERSION);
  } else if (stored > SCHEMA_VERSION) {
    root.close();
    throw new StorageError(
      `data dir ${dataDir} has schema version ${stored}, newer than this Sesame understands (${SCHEMA_VERSION})`,
    );
  }

  return {
    root,
    stores,
    tokens,
    revokedJwts,
    usedAssertions,
    durable:
      durability === 'commit'
        ? (write) => write
        : async (write) => {
            const result = await write;
            // With lmdb's overlapping sync a commit resolves before its fsync; `flushed` covers it.
            await root.flushed;
            return result;
          },
    async close() {
      await root.flushed;
      await root.close();
    },
  };
}
