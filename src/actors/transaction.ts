import { WriteBatch } from '../storage/batch.js';
import type { Storage } from '../storage/db.js';
import { decidedAgain, type StoresCopy } from './decided-again.js';
import type { Editor } from '../model/activity.js';

/**
 * Writes of several actors committed together, atomically and durably, in one commit the store
 * decides (an import's organization; see DirectoryWrites). Actors stage rows into it through their
 * `stage…` methods; nobody else sees those rows until it commits, and a failed commit leaves every
 * actor as it was.
 */
export type Transaction = WriteBatch;

export class Transactions {
  constructor(private readonly storage: Pick<Storage, 'durableDirectory' | 'directoryWrites' | 'directoryReader'>) {}

  /** A transaction of `by`'s changes (the activity log's editor; Sesame itself when absent). */
  begin(by?: Editor): Transaction {
    return new WriteBatch(by);
  }

  commit(transaction: Transaction): Promise<void> {
    return transaction.commit(this.storage);
  }

  /**
   * Stages with `build` and commits; when another copy changed one of the rows first, `copy` takes
   * that row again as stored and `build` runs anew (decidedAgain). Resolves with what `build` gave
   * for the commit that landed.
   */
  decide<T>(copy: StoresCopy, build: (transaction: Transaction) => T, by?: Editor): Promise<T> {
    return decidedAgain(this.storage.directoryReader, copy, async () => {
      const transaction = this.begin(by);
      const outcome = build(transaction);
      await this.commit(transaction);
      return outcome;
    });
  }
}
