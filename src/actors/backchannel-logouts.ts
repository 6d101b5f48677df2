import type { Storage } from '../storage/db.js';
import { Table } from '../storage/table.js';
import { ownRow, type View } from '../util/readonly.js';

/**
 * Owns the back-channel logout outbox: one row per (ended session, app to tell), written before
 * the request that ended the session answers, removed once the app accepted its logout token or
 * the retry window closed. Being in LMDB, what is queued survives a restart and is delivered by
 * the next process on the data dir.
 */
export interface PendingLogout {
  /** `sid` and client id: one logout per session and app, however many times the session is ended. */
  id: string;
  clientId: string;
  /** The user (`sub`) and the session (`sid`) the logout token names. */
  sub: string;
  sid: string;
  /** When the logout was queued (ms): the retry window counts from here. */
  queuedAt: number;
  /** Failed attempts so far. */
  failures: number;
  /** When the next attempt is due (ms). */
  dueAt: number;
  /** What the last attempt met (a status or a network error), for the log line of a final failure. */
  lastError?: string;
}

interface LogoutToQueue {
  clientId: string;
  sub: string;
  sid: string;
}

export class BackchannelLogoutsActor {
  private readonly pending: Table<PendingLogout>;

  constructor(storage: Storage) {
    this.pending = new Table(storage.stores.backchannelLogouts, storage.durable);
  }

  get size(): number {
    return this.pending.size;
  }

  get(id: string): View<PendingLogout> | undefined {
    return this.pending.get(id);
  }

  /**
   * Queues logouts, due at once; one already queued for the same session and app stays as it is.
   * Resolves once every row is durable.
   */
  async enqueue(logouts: readonly LogoutToQueue[], now: number): Promise<View<PendingLogout>[]> {
    const queued = new Map<string, PendingLogout>();
    for (const l of logouts) {
      const id = `${l.sid}|${l.clientId}`;
      if (this.pending.has(id) || queued.has(id)) continue;
      queued.set(id, { id, clientId: l.clientId, sub: l.sub, sid: l.sid, queuedAt: now, failures: 0, dueAt: now });
    }
    const rows = [...queued.values()];
    await Promise.all(rows.map((row) => this.pending.put(row)));
    return rows;
  }

  /** The logouts due at `now`, longest waiting first, at most `limit`. */
  due(now: number, limit = Infinity): View<PendingLogout>[] {
    const due: View<PendingLogout>[] = [];
    for (const row of this.pending.values()) if (row.dueAt <= now) due.push(row);
    due.sort((a, b) => a.dueAt - b.dueAt);
    return limit < due.length ? due.slice(0, limit) : due;
  }

  /** The app accepted the logout (or there is no one to tell any more): the row goes. */
  async done(id: string): Promise<void> {
    if (this.pending.has(id)) await this.pending.remove(id);
  }

  /** An attempt failed: counted, and the next one is due at `dueAt`. */
  async failed(id: string, dueAt: number, error: string): Promise<View<PendingLogout> | undefined> {
    const current = this.pending.get(id);
    if (!current) return undefined;
    const next: PendingLogout = { ...ownRow<PendingLogout>(current), failures: current.failures + 1, dueAt, lastError: error };
    await this.pending.put(next);
    return next;
  }
}
