import { WriteConflict } from '../model/errors.js';
import type { DirectoryReader } from '../storage/directory-reader.js';
import type { DirectoryStore } from '../storage/directory-log.js';

/** Tries per change: a change that keeps meeting newer ones (a burst on one record) is refused after these. */
const MOST_TRIES = 8;

/** A directory actor's copy of its stores: takes a record again as stored (see OrgsActor.takeChange). */
export interface StoresCopy {
  takeChange(store: DirectoryStore, id: string): boolean;
}

/**
 * A change decided on a thread's copy of the directory, decided again when the store refused it
 * because another thread's (or process's) change to the same record came first (WriteConflict):
 * the copy takes that record again as stored, and `attempt` runs anew on it, up to a few times.
 * Optimistic concurrency: no thread waits for another, and two changes to one record (two roles
 * added to a project at once) both land, one after the other.
 */
export async function decidedAgain<T>(reader: Pick<DirectoryReader, 'fetch'>, copy: StoresCopy, attempt: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof WriteConflict) || tries >= MOST_TRIES) throw error;
      // Several writers on one record (threads, nodes) would meet again at once: each waits a
      // random moment, longer after each loss, before it reads and decides again.
      if (tries > 1) await new Promise((resolve) => setTimeout(resolve, Math.random() * 2 ** tries));
      // Read again as committed: this copy may predate the change that came first.
      const changed = error.store === undefined ? [] : [{ store: error.store as DirectoryStore, id: error.key }];
      await reader.fetch(changed);
      for (const { store, id } of changed) copy.takeChange(store, id);
    }
  }
}

/** Every record of `tables` read again as stored into `copy` (a copy that fell too far behind the change feed to follow it, and cannot be loaded anew). */
export function retakeAll(copy: StoresCopy, tables: Partial<Record<DirectoryStore, { ids(): Set<string> }>>): void {
  for (const [store, table] of Object.entries(tables)) for (const id of table.ids()) copy.takeChange(store as DirectoryStore, id);
}
