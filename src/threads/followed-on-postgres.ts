import type { DirectoryStore } from '../storage/directory-log.js';
import type { PostgresDirectory, PostgresDirectoryReader } from '../storage/postgres/directory.js';
import { takeDirectoryChanges, type DirectoryCopy } from './followed-writes.js';

/** The directory's stores a node's copies hold. */
export const COPIED_STORES: readonly DirectoryStore[] = ['orgs', 'projects', 'users', 'members', 'userGrants', 'pats', 'policies', 'apps', 'appKeys', 'machineKeys', 'machineSecrets', 'signingKeys', 'meta'];

/** More changes waiting than this: the copies load whole instead. */
const MOST_CHANGES_TAKEN = 10_000;

/**
 * A node's copies of the directory following the database (PostgreSQL): each time the change feed
 * says the directory changed (a NOTIFY at every directory commit, and a periodic look for a
 * notification lost on the wire), the rows the feed names since the last look are fetched, then
 * taken into the copies in one synchronous step, so a request never sees half of a commit. When the
 * feed no longer reaches back that far (pruned), or too much is waiting, the copies load whole.
 * Runs one look at a time; a look asked for during one runs right after it.
 */
export class FollowedOnPostgres {
  private applied = 0;
  /** The passes one after another; a pass asked for while one waits to start is that one. */
  private tail: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;
  /** Whole loads so far (a copy that fell behind the feed). */
  wholeLoads = 0;

  constructor(
    private readonly directory: Pick<PostgresDirectory, 'since' | 'last'>,
    private readonly reader: Pick<PostgresDirectoryReader, 'fetch' | 'load'>,
    private readonly copy: DirectoryCopy,
  ) {}

  /** Loads the copies' stores and notes how far the feed was then (what is logged after is taken again: harmless). */
  async start(): Promise<void> {
    this.applied = await this.directory.last();
    await this.reader.load(COPIED_STORES);
  }

  /** Takes what was committed since the last look; resolves once the copies hold it. */
  look(): Promise<void> {
    // A pass not started yet will see everything committed before it starts: share it.
    if (this.queued) return this.queued;
    const pass = this.tail.then(() => {
      this.queued = undefined;
      return this.pass();
    });
    this.queued = pass;
    this.tail = pass.catch(() => undefined);
    return pass;
  }

  private async pass(): Promise<void> {
    const feed = await this.directory.since(this.applied, MOST_CHANGES_TAKEN);
    if (feed) {
      await this.reader.fetch(feed.changes);
      if (takeDirectoryChanges(this.copy, feed.changes)) {
        this.applied = feed.last;
        return;
      }
    }
    const through = await this.directory.last();
    await this.reader.load(COPIED_STORES);
    this.copy.orgs.retakeAll();
    this.copy.clients.retakeAll();
    this.copy.keys.load();
    this.copy.storage.meta.reload();
    this.copy.settings.storedChanged();
    this.applied = through;
    this.wholeLoads++;
  }
}
