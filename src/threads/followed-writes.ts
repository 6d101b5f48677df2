import type { OrgsActor } from '../actors/orgs.js';
import type { ClientsActor } from '../actors/clients.js';
import type { KeysActor } from '../actors/keys.js';
import type { SettingsActor } from '../actors/settings.js';
import type { Storage } from '../storage/db.js';
import type { DirectoryChange } from '../storage/directory-log.js';

/** A thread's copy of the directory: what takes the changes the feed names. */
export interface DirectoryCopy {
  orgs: Pick<OrgsActor, 'takeChange' | 'retakeAll'>;
  clients: Pick<ClientsActor, 'takeChange' | 'retakeAll'>;
  /** The signing keys (any thread rotates on an administrator's call). */
  keys: Pick<KeysActor, 'load'>;
  storage: Pick<Storage, 'meta'>;
  settings: Pick<SettingsActor, 'storedChanged'>;
}

/**
 * Takes changes another thread committed to the directory into a copy, record by record (the
 * directory's change feed names them): the one rule for every thread's copy. False when one names
 * a store the copy does not know (it is then loaded again whole).
 */
export function takeDirectoryChanges(copy: DirectoryCopy, changes: readonly DirectoryChange[]): boolean {
  let keySet = false;
  let meta = false;
  for (const { store, id } of changes) {
    if (store === 'signingKeys') keySet = true;
    else if (store === 'meta') meta = true;
    else if (!copy.orgs.takeChange(store, id) && !copy.clients.takeChange(store, id)) return false;
  }
  // A handful of records each: read again whole.
  if (keySet) copy.keys.load();
  if (meta) {
    copy.storage.meta.reload();
    copy.settings.storedChanged();
  }
  return true;
}

/** Entries read at most per catch-up: more waiting (the feed pruned past this copy, or a long quiet spell), every record is read again. */
const MOST_CHANGES_TAKEN = 10_000;

/**
 * The main thread's copy of the directory follows what the acceptor threads write to it (the
 * management API's changes, the login's, a key rotation), from the directory's change feed,
 * before each request.
 * Its own writes are visible in it at once; taking them again from the feed is harmless (a row
 * whose write is under way is left as it is, Table.refresh). Quiet changes (a failure count) move
 * no version and are taken with the next change that does; the decisions that read them read the
 * store. The main thread's copy cannot be loaded anew (its actors hold timers and writes under
 * way): a copy too far behind reads every record again instead.
 */
export class FollowedWrites {
  private seenVersion: number;
  private appliedThrough: number;

  constructor(
    private readonly storage: Pick<Storage, 'directoryVersion' | 'directoryLog'>,
    private readonly copy: DirectoryCopy,
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
    if (feed && takeDirectoryChanges(this.copy, feed.changes)) {
      this.appliedThrough = feed.last;
      return;
    }
    this.appliedThrough = this.storage.directoryLog.last();
    this.copy.orgs.retakeAll();
    this.copy.clients.retakeAll();
    this.copy.keys.load();
    this.copy.storage.meta.reload();
    this.copy.settings.storedChanged();
  }
}
