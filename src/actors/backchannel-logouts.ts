import { recordKind, type ChangeFeed, type StorePort } from '../storage/store-port.js';
import type { View } from '../util/readonly.js';

/**
 * The back-channel logout outbox: one row per (ended session, app to tell), written before
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
  /** While an attempt is under way: until when it holds the row (ms). */
  claimedUntil?: number;
}

interface LogoutToQueue {
  clientId: string;
  sub: string;
  sid: string;
}

/**
 * The outbox lives in the store: any HTTP thread that ends a session queues its logouts there
 * (first queueing of a session and app wins), and the deliverer (the main thread's loop, woken by
 * the store's change feed) reads what is due there. An attempt claims its row first, for as long
 * as an attempt may take: two deliverers (later, two nodes) never send the same logout at once.
 */
const OUTBOX = recordKind<PendingLogout>('backchannelLogouts');

export class BackchannelLogoutsActor {
  constructor(
    private readonly store: StorePort,
    /** Wakes the deliverer when a logout is queued, whichever thread (or node) queued it. */
    private readonly feed: ChangeFeed,
  ) {}

  size(): Promise<number> {
    return this.store.count(OUTBOX);
  }

  /** How many queueings the store's change feed announced so far (on any thread). */
  changes(): number {
    return this.feed.version('outbox');
  }

  /** Resolves once the feed announces queueings after `seen`, or after `timeoutMs`; with the count then. */
  changesAfter(seen: number, timeoutMs: number): Promise<number> {
    return this.feed.after('outbox', seen, timeoutMs);
  }

  get(id: string): Promise<View<PendingLogout> | undefined> {
    return this.store.get(OUTBOX, id);
  }

  /**
   * Queues logouts, due at once; one already queued for the same session and app stays as it is.
   * Resolves with the rows this call queued once every row is durable, and announces them on the
   * store's change feed (which wakes the deliverer, on whatever thread it runs).
   */
  async enqueue(logouts: readonly LogoutToQueue[], now: number): Promise<View<PendingLogout>[]> {
    const rows = new Map<string, PendingLogout>();
    for (const l of logouts) {
      const id = `${l.sid}|${l.clientId}`;
      if (!rows.has(id)) rows.set(id, { id, clientId: l.clientId, sub: l.sub, sid: l.sid, queuedAt: now, failures: 0, dueAt: now });
    }
    const queued = await this.store.durable(Promise.all([...rows.values()].map(async (row) => ((await this.store.insertIfAbsent(OUTBOX, row.id, row)) ? row : undefined))));
    const fresh = queued.filter((row): row is PendingLogout => row !== undefined);
    if (fresh.length > 0) this.feed.announce('outbox');
    return fresh;
  }

  /** The logouts due at `now` and not claimed by an attempt under way, longest waiting first, at most `limit`. */
  async due(now: number, limit = Infinity): Promise<View<PendingLogout>[]> {
    const due: View<PendingLogout>[] = [];
    for (const { value: row } of await this.store.range(OUTBOX, '')) {
      if (row.dueAt <= now && (row.claimedUntil ?? 0) <= now) due.push(row);
    }
    due.sort((a, b) => a.dueAt - b.dueAt);
    return limit < due.length ? due.slice(0, limit) : due;
  }

  /**
   * Claims a row for an attempt until `until` (ms): true when this caller may send it (the row is
   * still there, and no other attempt holds it).
   */
  async claim(id: string, now: number, until: number): Promise<boolean> {
    const { claimed } = await this.store.durable(this.store.claimOnce(OUTBOX, id, (row) => ((row.claimedUntil ?? 0) <= now ? { ...row, claimedUntil: until } : undefined)));
    return claimed;
  }

  /** The app accepted the logout (or there is no one to tell any more): the row goes. */
  async done(id: string): Promise<void> {
    await this.store.durable(this.store.remove(OUTBOX, id));
  }

  /** An attempt failed: counted, and the next one is due at `dueAt` (its claim ends). */
  async failed(id: string, dueAt: number, error: string): Promise<View<PendingLogout> | undefined> {
    return this.store.durable(
      this.store.update(OUTBOX, id, (current) => {
        if (!current) return undefined;
        const { claimedUntil: _ended, ...rest } = current;
        return { ...rest, failures: current.failures + 1, dueAt, lastError: error };
      }),
    );
  }

  /** An attempt cut short (shutdown): its claim ends, the row is due as it was. */
  async release(id: string): Promise<void> {
    await this.store.durable(
      this.store.update(OUTBOX, id, (current) => {
        if (!current?.claimedUntil) return undefined;
        const { claimedUntil: _ended, ...rest } = current;
        return rest;
      }),
    );
  }
}
