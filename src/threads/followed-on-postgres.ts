import type { PostgresChangeFeed } from '../storage/postgres/change-feed.js';
import type { PostgresDirectory, PostgresDirectoryReader } from '../storage/postgres/directory.js';
import type { NodePosition } from '../storage/postgres/node.js';
import { DIRECTORY_STORES } from '../storage/directory-log.js';
import { log } from '../util/log.js';
import { takeDirectoryChanges, type DirectoryCopy } from './followed-writes.js';

/**
 * How often a thread on PostgreSQL looks at the directory's change feed without a notification: the
 * longest a notification lost on the wire (the LISTEN connection alive, one message dropped) leaves
 * its copies behind. A lost connection is noticed by itself (see FollowedOnPostgres.current).
 */
export const DIRECTORY_POLL_MS = 1_000;

/** More changes waiting than this: the copies load whole instead. */
const MOST_CHANGES_TAKEN = 10_000;

/**
 * A node's copies of the directory following the database (PostgreSQL): each time the change feed
 * says the directory changed (a NOTIFY at every directory commit), and at least every poll interval
 * (a notification lost on the wire), the rows the feed names since the last look are fetched, then
 * taken into the copies in one synchronous step, so a request never sees half of a commit. When the
 * feed no longer reaches back that far (pruned), or too much is waiting, the copies load whole.
 * Runs one look at a time; a look asked for during one runs right after it.
 *
 * A change this process committed or took (on any of its threads) is seen by its next request:
 * copies behind the process's shared position look first (NodePosition).
 *
 * While the node does not listen (its LISTEN connection was lost), or listens again but has not
 * looked since, what was announced meanwhile is unheard: `current()` then has the request wait for
 * a look of its own (shared by the requests meanwhile), so no request is answered from a copy
 * older than its arrival by more than one look.
 */
export class FollowedOnPostgres {
  /** The listening generation of the feed when the last successful look began (see current()). */
  private lookedAt = -1;
  /** The passes one after another; a pass asked for while one waits to start is that one. */
  private tail: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;
  private following = false;
  /** Whole loads so far (a copy that fell behind the feed). */
  wholeLoads = 0;

  constructor(
    private readonly directory: Pick<PostgresDirectory, 'since' | 'last'>,
    private readonly reader: Pick<PostgresDirectoryReader, 'fetch' | 'load'>,
    private readonly copy: DirectoryCopy,
    private readonly feed: Pick<PostgresChangeFeed, 'connection' | 'version' | 'after'>,
    /** The change feed position the copies were loaded at (PostgresNode.loadedThrough). */
    private applied: number,
    /** The position this process's threads share: copies behind it look first, and a look moves it on. */
    private readonly position: NodePosition = { through: () => 0, reached: () => undefined },
  ) {}

  /**
   * Nothing to wait for (undefined) while the node listens and has looked since it began to; else
   * the look a request must wait for before it reads the copies.
   */
  current(): Promise<void> | undefined {
    const { listening, generation } = this.feed.connection();
    if (listening && this.lookedAt === generation && this.applied >= this.position.through()) return undefined;
    return this.look();
  }

  /** Looks at each notification of a directory change, and at least every `pollMs`, until stop(). */
  follow(pollMs: number): void {
    this.following = true;
    void (async () => {
      let seen = this.feed.version('directory');
      while (this.following) {
        seen = await this.feed.after('directory', seen, pollMs);
        if (!this.following) return;
        await this.look().catch((error: unknown) => log.warn('could not follow the directory; looking again', { error: String(error) }));
      }
    })();
  }

  stop(): void {
    this.following = false;
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
    // Read before the look: a reconnect during it calls for another.
    const { generation } = this.feed.connection();
    const feed = await this.directory.since(this.applied, MOST_CHANGES_TAKEN);
    if (feed) {
      await this.reader.fetch(feed.changes);
      if (takeDirectoryChanges(this.copy, feed.changes)) {
        this.applied = feed.last;
        this.lookedAt = generation;
        this.position.reached(this.applied);
        return;
      }
    }
    const through = await this.directory.last();
    await this.reader.load(DIRECTORY_STORES);
    this.copy.orgs.retakeAll();
    this.copy.clients.retakeAll();
    this.copy.keys.load();
    this.copy.storage.meta.reload();
    this.copy.settings.storedChanged();
    this.applied = through;
    this.lookedAt = generation;
    this.position.reached(this.applied);
    this.wholeLoads++;
  }
}
