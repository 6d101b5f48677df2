import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { MetaStore } from './meta.js';
import { DirectoryLog, type DirectoryStore } from './directory-log.js';
import { UniqueKeys } from './unique-keys.js';
import { LmdbStore } from './lmdb-store.js';
import { LmdbDirectoryWrites, type DirectoryWrites } from './directory-writes.js';
import { LmdbDirectoryReader, type DirectoryReader } from './directory-reader.js';
import { LmdbActivityLog, type ActivityLog } from './activity-log.js';
import { FEED_KINDS, type ChangeFeed, type FeedKind, type StorePort } from './store-port.js';
import { commitStarted, recordCommit } from '../observability/recorder.js';
import { traced, tracingOn } from '../observability/tracing.js';

/**
 * One LMDB environment per data dir, one named database per kind of record. Values are msgpack
 * (lmdb's msgpackr encoding). Writes use lmdb's batched asynchronous commits: every put issued in
 * one event-loop turn lands in one transaction, and its promise resolves once that is committed.
 */
export const SCHEMA_VERSION = 1;

const STORES = [
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
  // userSessions by agent and by user (`a/<agent id>/<sid>`, `u/<user id>/<sid>`), written with them (UserSessionsActor).
  'sessionIndex',
  'authCodes',
  'refreshFamilies',
  'revokedGrants',
  'revokedSessions',
  // Login security state per user: the last TOTP step used, recent wrong TOTP codes (LoginSecurityActor).
  'loginSecurity',
  // Sign-ins under way: auth requests and how far their login got (AuthRequestsActor), at most 30 minutes each.
  'authRequests',
  // Sign-ins under way per client address (a keyed MAC of it), oldest first: the per-address bound.
  'authRequestsByAddress',
  // Device authorizations (RFC 8628) until some minutes after they expired (DeviceAuthorizationsActor).
  'deviceAuthorizations',
  // Device authorizations by client and expiry (the per-client bound), and by user code key.
  'deviceAuthorizationIndex',
  // Pushed authorization requests (RFC 9126), 60 seconds each (PushedRequestsActor).
  'pushedRequests',
  // Each client's waiting pushed requests, oldest first (`<client id digest>/<sequence>`): the per-client bound.
  'pushedRequestsByClient',
  // Back-channel logout tokens waiting to be delivered to apps (BackchannelLogoutsActor), each for a bounded time.
  'backchannelLogouts',
  // Their due times (`<ms>|<id>`), soonest first (the outbox's index).
  'backchannelLogoutsDue',
  // What people allowed self-registered clients (ConsentsActor), per person and client.
  'consents',
  // Failures counted per key in a sliding window (FailureWindowsActor): wrong user codes per address.
  'failureWindows',
  // Leases for periodic work (LeasesActor): who sweeps now.
  'leases',
  // Mails waiting to be sent, and those given up (MailOutbox); their due times (`<ms>|<id>`), soonest first.
  'mailOutbox',
  'mailOutboxDue',
  // Codes sent to people (email verification, password reset, initialization, email OTP): digests only (UserCodesActor).
  'userCodes',
  // Images and fonts of label policies, by their SHA-256 (LabelAssetsActor).
  'labelAssets',
  // Imports answered before they were over: their progress and reports (ImportJobsActor), kept 7 days.
  'importJobs',
  // Security keys being registered through the auth API: the challenge handed out, one per person (PendingRegistrationsActor).
  'webauthnRegistrations',
] as const;
export type StoreName = (typeof STORES)[number];

export interface Storage {
  readonly root: RootDatabase;
  /** The `meta` store's owner (schema version, master key check, instance record, settings). */
  readonly meta: MetaStore;
  readonly stores: Record<StoreName, Database<any, string>>;
  /** Opaque access tokens keyed by the SHA-256 digest of the token. */
  readonly tokens: Database<any, Buffer>;
  /** Revoked JWT ids (jti) with their expiry, so revocation of a JWT costs one write, issuance none. */
  readonly revokedJwts: Database<number, string>;
  /** Assertions already used (replay key → exp), see ReplayGuardActor. */
  readonly usedAssertions: Database<number, string>;
  /** The store port over this environment (`LmdbStore`): what the flows' actors read and decide through. */
  readonly records: StorePort;
  /** The activity log (model/activity.ts): written in the transactions of the changes it describes, read by the event API. */
  readonly activity: LmdbActivityLog;
  /**
   * Resolves once a write is durable: committed (survives a process crash) and, in `flush` mode,
   * also synced to disk (survives power loss). Responses that hand out state wait for this.
   */
  durable<T>(write: Promise<T>): Promise<T>;
  /**
   * `durable` for the directory (orgs, users, projects, grants, clients, signing keys, settings):
   * the state every HTTP thread keeps a copy of. Once durable, the directory's version moves, so
   * the other threads reload their copy before they serve their next request.
   */
  durableDirectory<T>(write: Promise<T>): Promise<T>;
  /**
   * Makes this thread's next reads see every commit made so far by any thread. LMDB readers keep
   * a snapshot until it is renewed, and a commit from another thread does not renew this one's:
   * each HTTP request starts with this call (a counter compare when nothing was written elsewhere).
   */
  freshReads(): void;
  /** Moves on every durable change to the directory (see durableDirectory). */
  directoryVersion(): number;
  /** Moves the directory version (durableDirectory does after its commit; a write that knows only once committed whether the copies read it calls this). */
  directoryChanged(): void;
  /** Which directory records changed, in commit order: what a copy of the directory re-reads (see DirectoryLog). */
  readonly directoryLog: DirectoryLog;
  /** How the directory is written: commits the store decides (rows at the version read, unique keys, the change feed; see DirectoryWrites). */
  readonly directoryWrites: DirectoryWrites;
  /** How the copies of the directory read it (whole stores at a load, the rows the change feed names). */
  readonly directoryReader: DirectoryReader;
  /** The directory's unique keys (names, domains, resource URIs, client ids), taken in the transactions that write records (see UniqueKeys). */
  readonly uniqueKeys: UniqueKeys;
  /** Which kinds of records changed, for every thread of the process (see ChangeFeed). */
  readonly feed: ChangeFeed;
  /** The counters the server's threads share: handed to `openStorage` in each acceptor thread. */
  readonly sharedCounters: SharedArrayBuffer;
  /** The environment's size figures (for metrics): the map's size, the bytes in use, reader slots taken. */
  sizes(): { mapSize: number; usedBytes: number; readers: number };
  close(): Promise<void>;
}

/**
 * What the directory's actors (orgs and users, clients) need of a store: its reader and commits,
 * durability and the announcement of a change, and the meta store. LMDB's Storage has it; so does a
 * node on PostgreSQL (src/storage/postgres/).
 */
export type DirectoryStorage = Pick<Storage, 'durable' | 'durableDirectory' | 'directoryWrites' | 'directoryReader' | 'directoryChanged' | 'meta'>;

/**
 * What an HTTP thread's parts need of a store, whichever it is (src/compose.ts): the directory's
 * (DirectoryStorage), the store port the flows decide through, the change feed, and closing. LMDB's
 * Storage has it; so does a node on PostgreSQL (src/storage/postgres/node.ts).
 */
export type NodeStorage = DirectoryStorage & Pick<Storage, 'records' | 'feed' | 'close'> & { readonly activity: ActivityLog };

/** Slots of the shared counters: commits made by any thread, directory changes, then the feed's kinds. */
const COMMITS = 0;
const DIRECTORY = 1;
const COUNTER_SLOTS = 2 + FEED_KINDS.length;
export type { ChangeFeed, FeedKind };

export type Durability = 'flush' | 'commit';

class StorageError extends Error {}

export function openStorage(dataDir: string, durability: Durability = 'flush', sharedCounters = new SharedArrayBuffer(4 * COUNTER_SLOTS)): Storage {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const root = open({
    path: join(dataDir, 'sesame.lmdb'),
    maxDbs: 64,
    // Large maps cost nothing until used; 64 GiB leaves room for big imports.
    mapSize: 64 * 1024 ** 3,
    encoding: 'msgpack',
    noMemInit: true,
  });
  const stores = Object.fromEntries(STORES.map((name) => [name, root.openDB<any, string>({ name, encoding: 'msgpack' })])) as Record<StoreName, Database<any, string>>;
  const tokens = root.openDB<any, Buffer>({ name: 'tokens', encoding: 'msgpack', keyEncoding: 'binary' });
  const revokedJwts = root.openDB<number, string>({ name: 'revokedJwts', encoding: 'msgpack' });
  const usedAssertions = root.openDB<number, string>({ name: 'usedAssertions', encoding: 'msgpack' });

  const counters = new Int32Array(sharedCounters);
  // The commit count this thread's read snapshot is known to include.
  let seenCommits = Atomics.load(counters, COMMITS);
  const committed = () => {
    const before = Atomics.add(counters, COMMITS, 1);
    // lmdb renews this thread's snapshot after its own commit: still current unless another thread committed meanwhile.
    if (seenCommits === before) seenCommits = before + 1;
  };
  // Timed from the call (the write was just issued) to durability: what a response waits for.
  const untracedDurable =
    durability === 'commit'
      ? async <T>(write: Promise<T>) => {
          const startedAt = commitStarted();
          const result = await write;
          committed();
          recordCommit(startedAt);
          return result;
        }
      : async <T>(write: Promise<T>) => {
          const startedAt = commitStarted();
          const result = await write;
          committed();
          // With lmdb's overlapping sync a commit resolves before its fsync; `flushed` covers it.
          await root.flushed;
          recordCommit(startedAt);
          return result;
        };
  const commitAttributes = { 'sesame.durability': durability };
  const durable = <T>(write: Promise<T>): Promise<T> => (tracingOn() ? traced('lmdb commit', commitAttributes, () => untracedDurable(write)) : untracedDurable(write));
  const directoryChanged = () => void Atomics.add(counters, DIRECTORY, 1);
  const durableDirectory = async <T>(write: Promise<T>) => {
    try {
      return await durable(write);
    } finally {
      // Also after a failed sync: the commit may be on disk, and a reload of the copies is harmless.
      directoryChanged();
    }
  };
  // Number keys (sequence numbers) in LMDB's ordered-binary encoding: read back in numeric order.
  const directoryLog = new DirectoryLog(root.openDB<any, number>({ name: 'directoryChanges', encoding: 'msgpack' }));
  const uniqueKeys = new UniqueKeys(root.openDB<string, string>({ name: 'uniqueKeys', encoding: 'msgpack' }));
  const metaDb = root.openDB<any, string>({ name: 'meta', encoding: 'msgpack' });
  const signingKeysDb = stores.signingKeys;
  const directoryDb = (store: DirectoryStore) => (store === 'meta' ? metaDb : store === 'signingKeys' ? signingKeysDb : stores[store]);
  // Events by number (numbers in LMDB's ordered-binary encoding, read back in numeric order) and by aggregate.
  const activity = new LmdbActivityLog(root.openDB<any, number>({ name: 'activity', encoding: 'msgpack' }), root.openDB<number, string>({ name: 'activityByAggregate', encoding: 'msgpack' }), () =>
    freshReads(),
  );
  const directoryWrites = new LmdbDirectoryWrites(root, directoryDb, directoryLog, uniqueKeys, activity);
  const directoryReader = new LmdbDirectoryReader(directoryDb, () => freshReads(), uniqueKeys);
  // A new data dir is marked with this build's schema version before anything else is written.
  if (metaDb.get('schemaVersion') === undefined) metaDb.putSync('schemaVersion', SCHEMA_VERSION);
  const meta = new MetaStore(directoryReader, directoryWrites, durableDirectory);
  const stored = meta.schemaVersion() ?? SCHEMA_VERSION;
  if (stored > SCHEMA_VERSION) {
    root.close();
    throw new StorageError(`data dir ${dataDir} has schema version ${stored}, newer than this Sesame understands (${SCHEMA_VERSION})`);
  }

  // A kind of record is the database of its name.
  const named: Record<string, Database<any, any>> = { ...stores, tokens, revokedJwts, usedAssertions };
  const freshReads = () => {
    const commits = Atomics.load(counters, COMMITS);
    if (commits === seenCommits) return;
    seenCommits = commits;
    root.resetReadTxn();
  };
  const records = new LmdbStore(
    (kind) => {
      const db = named[kind.name];
      if (!db) throw new Error(`no LMDB database for records of kind ${kind.name}`);
      return db;
    },
    durable,
    freshReads,
    activity,
  );

  return {
    root,
    meta,
    stores,
    tokens,
    revokedJwts,
    usedAssertions,
    records,
    activity,
    durable,
    durableDirectory,
    directoryChanged,
    freshReads,
    directoryVersion: () => Atomics.load(counters, DIRECTORY),
    directoryLog,
    directoryWrites,
    directoryReader,
    uniqueKeys,
    feed: {
      version: (kind) => Atomics.load(counters, 2 + FEED_KINDS.indexOf(kind)),
      announce(kind) {
        const slot = 2 + FEED_KINDS.indexOf(kind);
        Atomics.add(counters, slot, 1);
        Atomics.notify(counters, slot);
      },
      async after(kind, seen, timeoutMs) {
        const slot = 2 + FEED_KINDS.indexOf(kind);
        // Atomics.waitAsync (Node 16+), not yet in TypeScript's ES2023 lib.
        const waitAsync = (Atomics as unknown as { waitAsync(a: Int32Array, i: number, v: number, t: number): { async: boolean; value: Promise<string> | string } }).waitAsync;
        const wait = waitAsync(counters, slot, seen, timeoutMs);
        if (wait.async) await wait.value;
        return Atomics.load(counters, slot);
      },
    },
    sharedCounters,
    sizes() {
      // lmdb types getStats() as {}; these are LMDB's own figures (mdb_env_info, mdb_env_stat).
      const stats = root.getStats() as { mapSize: number; lastPageNumber: number; pageSize: number; numReaders: number };
      return { mapSize: stats.mapSize, usedBytes: (stats.lastPageNumber + 1) * stats.pageSize, readers: stats.numReaders };
    },
    async close() {
      await root.flushed;
      await root.close();
    },
  };
}
