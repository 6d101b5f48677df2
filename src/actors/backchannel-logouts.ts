import { Outbox, type OutboxEntry } from './outbox.js';
import type { ChangeFeed, StorePort } from '../storage/store-port.js';

/**
 * The back-channel logout outbox: one row per (ended session, app to tell), written before the
 * request that ended the session answers, removed once the app accepted its logout token or the
 * retry window closed. A durable outbox in the store (src/actors/outbox.ts): any HTTP thread (or
 * node) that ends a session queues its logouts there (first queueing of a session and app wins), the
 * deliverer reads what is due by its due-time index, and an attempt claims its row first, so two
 * deliverers never send the same logout at once.
 */
export interface PendingLogout extends OutboxEntry {
  /** `sid` and client id: one logout per session and app, however many times the session is ended. */
  id: string;
  clientId: string;
  /** The user (`sub`) and the session (`sid`) the logout token names. */
  sub: string;
  sid: string;
}

interface LogoutToQueue {
  clientId: string;
  sub: string;
  sid: string;
}

/** Rows read per look for due logouts; a longer queue is read again at once. */
const DUE_LIMIT = 1000;

export class BackchannelLogoutsActor {
  readonly outbox: Outbox<PendingLogout>;

  constructor(store: StorePort, feed: ChangeFeed) {
    this.outbox = new Outbox<PendingLogout>(store, feed, 'backchannelLogouts', 'outbox');
  }

  size(): Promise<number> {
    return this.outbox.size();
  }

  changes(): number {
    return this.outbox.changes();
  }

  changesAfter(seen: number, timeoutMs: number): Promise<number> {
    return this.outbox.changesAfter(seen, timeoutMs);
  }

  get(id: string): Promise<PendingLogout | undefined> {
    return this.outbox.get(id);
  }

  /** Queues logouts, due at once; one already queued for the same session and app stays as it is. Resolves with the rows this call queued, durable. */
  enqueue(logouts: readonly LogoutToQueue[], now: number): Promise<PendingLogout[]> {
    const rows = new Map<string, PendingLogout>();
    for (const l of logouts) {
      const id = `${l.sid}|${l.clientId}`;
      if (!rows.has(id)) rows.set(id, { id, clientId: l.clientId, sub: l.sub, sid: l.sid, queuedAt: now, failures: 0, dueAt: now });
    }
    return this.outbox.enqueue([...rows.values()]);
  }

  /** The logouts due at `now` and not claimed by an attempt under way, longest waiting first. */
  due(now: number, limit = DUE_LIMIT): Promise<PendingLogout[]> {
    return this.outbox.dueAt(now, limit);
  }

  claim(id: string, now: number, until: number): Promise<boolean> {
    return this.outbox.claim(id, now, until);
  }

  done(id: string): Promise<void> {
    return this.outbox.done(id);
  }

  failed(id: string, dueAt: number, error: string): Promise<PendingLogout | undefined> {
    return this.outbox.failed(id, dueAt, error);
  }

  release(id: string, now: number): Promise<PendingLogout | undefined> {
    return this.outbox.release(id, now);
  }

  /** Rows queued before the outbox had its due-time index get their index key (once, at start). */
  reindex(): Promise<number> {
    return this.outbox.reindex();
  }
}
