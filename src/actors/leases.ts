import { randomBytes } from 'node:crypto';
import type { Storage } from '../storage/db.js';
import { clock } from '../util/clock.js';

/**
 * Leases for periodic work, held in the store: of the processes on one data dir (later, the nodes
 * on one database) one does the work a lease names at a time, and another takes over once the
 * holder stops renewing it. The holder is this process, under an id drawn at start.
 */
export class LeasesActor {
  readonly holder = randomBytes(9).toString('base64url');

  constructor(private readonly storage: Storage) {}

  /** Takes or renews the lease `name` for `ttlMs`; true when this process holds it now. */
  hold(name: string, ttlMs: number, now = clock.now()): Promise<boolean> {
    return this.storage.decisions.lease(this.storage.stores.leases, name, this.holder, now, now + ttlMs);
  }
}
