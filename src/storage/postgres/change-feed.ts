import type pg from 'pg';
import { log } from '../../util/log.js';
import { recordNotificationLag } from '../../observability/recorder.js';
import { FEED_KINDS, type ChangeFeed, type FeedKind } from '../store-port.js';

/** The channel every node listens on; the payload names the kind of change. */
export const FEED_CHANNEL = 'sesame_feed';

/**
 * A notification's payload: the kind of change, and when it was sent (wall-clock ms: the metrics'
 * notification lag; a receiver reads the kind alone if the time is missing).
 */
export function feedPayload(kind: FeedKind): string {
  return `${kind} ${Date.now()}`;
}

/** Pauses between attempts to listen again after the connection was lost (ms), the last repeated. */
const RECONNECT_PAUSES_MS = [100, 250, 500, 1000, 2000, 5000];

/** The feed's cells a process's threads share: listening (0/1), listenings so far, a version per kind, and a cell that moves at every bump (what waiters wait on). */
const LISTENING = 0;
const LISTENS = 1;
const VERSIONS = 2;
const BUMPS = VERSIONS + FEED_KINDS.length;
export const FEED_CELLS = BUMPS + 1;

/** Atomics.waitAsync (Node 16+; in TypeScript's lib from es2024 on). */
const waitAsync = (Atomics as unknown as { waitAsync(cells: Int32Array, index: number, value: number, timeoutMs: number): { async: boolean; value: Promise<unknown> | string } }).waitAsync.bind(
  Atomics,
);

/** Memory for the feed's cells, for the threads of one process to share (see PostgresChangeFeed's `cells`). */
export function newFeedCells(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(FEED_CELLS * Int32Array.BYTES_PER_ELEMENT));
}

/**
 * The change feed across nodes: `announce` is a NOTIFY on the database, every node LISTENs on one
 * connection of its own and moves its counters when a notification arrives. A notification sent
 * while a node was not listening is lost (PostgreSQL keeps none for later), so a node that listens
 * again after losing its connection moves every counter: its waiters look at the store again, and
 * whatever was announced meanwhile is found there (the counters say "look", the store says what).
 */
export class PostgresChangeFeed implements ChangeFeed {
  private readonly waiters = new Set<() => void>();
  private listener: pg.Client | undefined;
  private closed = false;
  private reconnects = 0;

  constructor(
    /** Where NOTIFY is sent from (any pooled connection). */
    private readonly pool: pg.Pool,
    /** A new connection for LISTEN (a pool would hand the connection back, and it would stop listening). */
    private readonly newClient: () => pg.Client,
    /**
     * The feed's state, shared by a process's threads: one of them listens (`listens`), and the
     * others read what it heard from here and wait on it, so a node keeps one LISTEN connection
     * however many threads it has.
     */
    private readonly cells: Int32Array = newFeedCells(),
    private readonly listens = true,
  ) {}

  /** Resolves once this node listens (on the thread that listens; at once on the others). */
  async start(): Promise<void> {
    if (this.listens) await this.listen();
  }

  /**
   * Whether this node hears the other nodes' changes now, and which listening it is (it counts up
   * at each reconnect): a copy that looked at the store before the current listening began may miss
   * what was announced while nobody listened.
   */
  connection(): { listening: boolean; generation: number } {
    return { listening: Atomics.load(this.cells, LISTENING) === 1, generation: Atomics.load(this.cells, LISTENS) };
  }

  version(kind: FeedKind): number {
    return Atomics.load(this.cells, VERSIONS + FEED_KINDS.indexOf(kind));
  }

  announce(kind: FeedKind): void {
    // This node's waiters at once; the others (and this one again, harmlessly) by the notification.
    this.bump([kind]);
    this.pool.query('SELECT pg_notify($1, $2)', [FEED_CHANNEL, feedPayload(kind)]).catch((error: unknown) => {
      // The change itself is committed: another node finds it at its next pass, only later.
      log.warn('could not announce a change to the other nodes', { kind, error: String(error) });
    });
  }

  after(kind: FeedKind, seen: number, timeoutMs: number): Promise<number> {
    if (this.version(kind) !== seen) return Promise.resolve(this.version(kind));
    if (!this.listens) return this.afterElsewhere(kind, seen, timeoutMs);
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(this.version(kind));
      };
      const check = () => {
        if (this.version(kind) !== seen || this.closed) finish();
      };
      const timer = setTimeout(finish, timeoutMs);
      // A pending wait does not keep the process alive.
      timer.unref();
      this.waiters.add(check);
    });
  }

  /** On a thread that does not listen: waits for the listening thread's (or any thread's) bump. */
  private async afterElsewhere(kind: FeedKind, seen: number, timeoutMs: number): Promise<number> {
    const until = performance.now() + timeoutMs;
    while (this.version(kind) === seen && !this.closed) {
      const bumps = Atomics.load(this.cells, BUMPS);
      if (this.version(kind) !== seen) break;
      const left = until - performance.now();
      if (left <= 0) break;
      const wait = waitAsync(this.cells, BUMPS, bumps, left);
      if (wait.async) await wait.value;
    }
    return this.version(kind);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of [...this.waiters]) waiter();
    const listener = this.listener;
    this.listener = undefined;
    if (this.listens) Atomics.store(this.cells, LISTENING, 0);
    // Wakes this process's waiting threads (a closed feed's waiters return).
    Atomics.notify(this.cells, BUMPS);
    await listener?.end().catch(() => undefined);
  }

  private bump(kinds: readonly FeedKind[]): void {
    for (const kind of kinds) Atomics.add(this.cells, VERSIONS + FEED_KINDS.indexOf(kind), 1);
    Atomics.add(this.cells, BUMPS, 1);
    Atomics.notify(this.cells, BUMPS);
    for (const waiter of [...this.waiters]) waiter();
  }

  private async listen(): Promise<void> {
    const client = this.newClient();
    client.on('notification', (message) => {
      const [named, sentAt] = (message.payload ?? '').split(' ');
      const kind = FEED_KINDS.find((k) => k === named);
      if (!kind) return;
      if (sentAt) recordNotificationLag((Date.now() - Number(sentAt)) / 1000);
      this.bump([kind]);
    });
    // A lost connection (a database restart, a network cut): listen again, and look again meanwhile.
    client.on('error', (error) => log.warn('lost the change feed connection; listening again', { error: error.message }));
    client.on('end', () => {
      if (this.closed || this.listener !== client) return;
      this.listener = undefined;
      Atomics.store(this.cells, LISTENING, 0);
      void this.listenAgain();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${FEED_CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    // Closed while this connection was being made: it is not kept.
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
    Atomics.add(this.cells, LISTENS, 1);
    Atomics.store(this.cells, LISTENING, 1);
  }

  private async listenAgain(): Promise<void> {
    while (!this.closed) {
      const pause = RECONNECT_PAUSES_MS[Math.min(this.reconnects, RECONNECT_PAUSES_MS.length - 1)]!;
      this.reconnects++;
      await new Promise((resolve) => setTimeout(resolve, pause).unref());
      try {
        await this.listen();
        this.reconnects = 0;
        // Whatever was announced while this node was not listening is in the store: look again.
        this.bump(FEED_KINDS);
        return;
      } catch (error) {
        log.warn('could not listen to the change feed yet; trying again', { error: String(error) });
      }
    }
  }
}
