import type { OrgsActor } from '../actors/orgs.js';
import type { Storage } from '../storage/db.js';
import type { DirectoryStore } from '../storage/directory-log.js';

/** What the acceptor threads write to the directory themselves: people (the login's decisions, Table.change). */
const WRITTEN_ELSEWHERE: ReadonlySet<DirectoryStore> = new Set(['users']);

/** Entries read at most per catch-up: more waiting (the feed pruned past this copy, or a long quiet spell), every person is read again. */
const MOST_CHANGES_TAKEN = 10_000;

/**
 * The main thread's copy of the directory follows what the acceptor threads write to it, from the
 * directory's change feed: the people the login changed there (a lock, a TOTP enrollment, a new
 * password). Everything else in the directory the main thread writes itself. Quiet changes (a
 * failure count) move no version and are taken with the next change that does; the decisions that
 * read them read the store.
 */
export class FollowedWrites {
  private seenVersion: number;
  private appliedThrough: number;

  constructor(
    private readonly storage: Pick<Storage, 'directoryVersion' | 'directoryLog'>,
    private readonly orgs: Pick<OrgsActor, 'takeChange' | 'retakeAllUsers'>,
  ) {
    this.seenVersion = storage.directoryVersion();
    this.appliedThrough = storage.directoryLog.last();
  }

  /** Before a request (reads already fresh): takes what was committed since the last one. */
  catchUp(): void {
    const version = this.storage.directoryVersion();
    if (version === this.seenVersion) return;
    this.seenVersion = version;
    const feed = this.storage.directoryLog.since(this.appliedThrough, MOST_CHANGES_TAKEN);
    if (!feed) {
      this.appliedThrough = this.storage.directoryLog.last();
      this.orgs.retakeAllUsers();
      return;
    }
    for (const { store, id } of feed.changes) if (WRITTEN_ELSEWHERE.has(store)) this.orgs.takeChange(store, id);
    this.appliedThrough = feed.last;
  }
}
