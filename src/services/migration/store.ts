import type { Editor } from '../../model/activity.js';
import type { ClientsActor } from '../../actors/clients.js';
import type { OrgsActor } from '../../actors/orgs.js';
import type { AppRecord, MachineSecretRecord, MemberRecord, OrgRecord, PolicyRecord, ProjectRecord, UserGrantRecord, UserRecord } from '../../model/records.js';
import type { Transaction, Transactions } from '../../actors/transaction.js';
import type { View } from '../../util/readonly.js';
import { yieldToEventLoop, type Deadline } from './deadline.js';

/**
 * What migration needs from storage and nothing more: atomic commits of an import's batches (the
 * actors stage into them), and a walk over one consistent snapshot of the directory for an export,
 * read through the actors that own it (their rows at one moment, so writes made while the export
 * runs are not half seen). The walk hands each record to a visitor, in id order per store.
 */
export interface SnapshotVisitor {
  org(record: View<OrgRecord>): void;
  policy(record: View<PolicyRecord>): void;
  project(record: View<ProjectRecord>): void;
  app(record: View<AppRecord>): void;
  machineSecret(record: View<MachineSecretRecord>): void;
  user(record: View<UserRecord>): void;
  userGrant(record: View<UserGrantRecord>): void;
  member(record: View<MemberRecord>): void;
}

const YIELD_EVERY = 2000;

export class MigrationStore {
  constructor(
    private readonly transactions: Transactions,
    private readonly orgs: OrgsActor,
    private readonly clients: ClientsActor,
  ) {}

  /** A transaction the actors stage an organization's rows into. */
  begin(by?: Editor): Transaction {
    return this.transactions.begin(by);
  }

  commit(transaction: Transaction): Promise<void> {
    return this.transactions.commit(transaction);
  }

  /** Visits every directory record of one snapshot; pauses for other requests now and then. */
  async walkSnapshot(visitor: SnapshotVisitor, deadline?: Deadline): Promise<void> {
    // Taken together, synchronously: one moment of the directory.
    const directory = this.orgs.snapshot();
    const clients = this.clients.snapshot();
    let rows = 0;
    const walk = async <R>(records: readonly R[], visit: (record: R) => void) => {
      for (const record of records) {
        visit.call(visitor, record);
        if (++rows % YIELD_EVERY === 0) {
          await yieldToEventLoop();
          deadline?.check();
        }
      }
    };
    // Order matters: orgs first (selection), projects before members, secrets before users.
    await walk(directory.orgs, visitor.org);
    await walk(directory.policies, visitor.policy);
    await walk(directory.projects, visitor.project);
    await walk(clients.apps, visitor.app);
    await walk(clients.machineSecrets, visitor.machineSecret);
    await walk(directory.users, visitor.user);
    await walk(directory.userGrants, visitor.userGrant);
    await walk(directory.members, visitor.member);
  }
}
