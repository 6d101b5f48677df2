import type {
  AppRecord,
  MachineSecretRecord,
  MemberRecord,
  OrgRecord,
  PolicyRecord,
  ProjectRecord,
  UserGrantRecord,
  UserRecord,
} from '../../model/records.js';
import type { WriteBatch } from '../../storage/batch.js';
import type { Storage, StoreName } from '../../storage/db.js';
import { yieldToEventLoop, type Deadline } from './deadline.js';

/**
 * What migration needs from storage and nothing more: atomic commits of an import's batches, and
 * a walk over one consistent read snapshot of the directory for an export (an LMDB read
 * transaction, so writes made while the export runs are not half seen). The walk hands each
 * record to a visitor as it is read, in id order per store, so an export never holds the whole
 * directory as objects.
 */
export interface SnapshotVisitor {
  org(record: OrgRecord): void;
  policy(record: PolicyRecord): void;
  project(record: ProjectRecord): void;
  app(record: AppRecord): void;
  machineSecret(record: MachineSecretRecord): void;
  user(record: UserRecord): void;
  userGrant(record: UserGrantRecord): void;
  member(record: MemberRecord): void;
}

const YIELD_EVERY = 2000;

/** Store order matters: orgs first (selection), projects before members, secrets before users. */
const ORDER: [StoreName, keyof SnapshotVisitor][] = [
  ['orgs', 'org'],
  ['policies', 'policy'],
  ['projects', 'project'],
  ['apps', 'app'],
  ['machineSecrets', 'machineSecret'],
  ['users', 'user'],
  ['userGrants', 'userGrant'],
  ['members', 'member'],
];

export class MigrationStore {
  constructor(private readonly storage: Storage) {}

  commit(batch: WriteBatch): Promise<void> {
    return batch.commit(this.storage);
  }

  /** Visits every directory record of one snapshot; pauses for other requests now and then. */
  async walkSnapshot(visitor: SnapshotVisitor, deadline?: Deadline): Promise<void> {
    const transaction = this.storage.root.useReadTransaction();
    let rows = 0;
    try {
      for (const [store, method] of ORDER) {
        const db = this.storage.stores[store];
        if (!db) continue;
        const visit = visitor[method].bind(visitor) as (record: unknown) => void;
        for (const { value } of db.getRange({ transaction })) {
          visit(value);
          if (++rows % YIELD_EVERY === 0) {
            await yieldToEventLoop();
            deadline?.check();
          }
        }
      }
    } finally {
      transaction.done();
    }
  }
}
