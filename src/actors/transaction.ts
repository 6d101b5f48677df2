import { WriteBatch } from '../storage/batch.js';
import type { Storage } from '../storage/db.js';

/**
 * Writes of several actors committed together, atomically and durably, in one commit the store
 * decides (an import's organization; see DirectoryWrites). Actors stage rows into it through their
 * `stage…` methods; nobody else sees those rows until it commits, and a failed commit leaves every
 * actor as it was.
 */
export type Transaction = WriteBatch;

export class Transactions {
  constructor(private readonly storage: Pick<Storage, 'durableDirectory' | 'directoryWrites'>) {}

  begin(): Transaction {
    return new WriteBatch();
  }

  commit(transaction: Transaction): Promise<void> {
    return transaction.commit(this.storage);
  }
}
