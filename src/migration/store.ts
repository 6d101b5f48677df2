import type {
  AppRecord,
  MachineSecretRecord,
  MemberRecord,
  OrgRecord,
  PolicyRecord,
  ProjectRecord,
  UserGrantRecord,
  UserRecord,
} from '../model/records.js';
import type { WriteBatch } from '../storage/batch.js';
import type { Storage, StoreName } from '../storage/db.js';
import { yieldToEventLoop, type Deadline } from './deadline.js';

/**
 * What migration needs from storage and nothing more: atomic commits of an import's batches, and
 * one consistent read snapshot of the directory for an export (an LMDB read transaction, so
 * writes made while the export runs are not half seen).
 */
export interface DirectorySnapshot {
  orgs: OrgRecord[];
  policies: PolicyRecord[];
  projects: ProjectRecord[];
  apps: AppRecord[];
  users: UserRecord[];
  machineSecrets: MachineSecretRecord[];
  userGrants: UserGrantRecord[];
  members: MemberRecord[];
}

const YIELD_EVERY = 5000;

export class MigrationStore {
  constructor(private readonly storage: Storage) {}

  commit(batch: WriteBatch): Promise<void> {
    return batch.commit(this.storage);
  }

  async snapshot(deadline?: Deadline): Promise<DirectorySnapshot> {
    const transaction = this.storage.root.useReadTransaction();
    let rows = 0;
    const read = async <T>(name: StoreName): Promise<T[]> => {
      const out: T[] = [];
      const db = this.storage.stores[name];
      if (!db) return out;
      for (const { value } of db.getRange({ transaction })) {
        out.push(value as T);
        if (++rows % YIELD_EVERY === 0) {
          await yieldToEventLoop();
          deadline?.check();
        }
      }
      return out;
    };
    try {
      return {
        orgs: await read('orgs'),
        policies: await read('policies'),
        projects: await read('projects'),
        apps: await read('apps'),
        users: await read('users'),
        machineSecrets: await read('machineSecrets'),
        userGrants: await read('userGrants'),
        members: await read('members'),
      };
    } finally {
      transaction.done();
    }
  }
}
