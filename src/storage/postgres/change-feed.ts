import pg from 'pg';
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

/**
 * The change feed across nodes: `announce` is a NOTIFY on the database, every node LISTENs on one
 * connection of its own and moves its counters when a notification arrives. A notification sent
 * while a node was not listening is lost (PostgreSQL keeps none for later), so a node that listens
 * again after losing its connection moves every counter: its waiters look at the store again, and
 * whatever was announced meanwhile is found there (the counters say "look", the store says what).
 */
export class PostgresChangeFeed implements ChangeFeed {
  private readonly versions = new Map<FeedKind, number>(FEED_KINDS.map((kind) => [kind, 0]));
  private readonly waiters = new Set<() => void>();
  private listener: pg.Client | undefined;
  private closed = false;
  private reconnects = 0;
  /** Times this node began listening (the first time included): a new one means notifications may have been lost before it. */
  private listens = 0;

  constructor(
    /** Where NOTIFY is sent from (any pooled connection). */
    private readonly pool: pg.Pool,
    /** A new connection for LISTEN (a pool would hand the connection back, and it would stop listening). */
    private readonly newClient: () => pg.Client,
  ) {}

  /** Resolves once this node listens. */
  async start(): Promise<void> {
    await this.listen();
  }

  /**
   * Whether this node hears the other nodes' changes now, and which listening it is (it counts up
   * at each reconnect): a copy that looked at the store before the current listening began may miss
   * what was announced while nobody listened.
   */
  connection(): { listening: boolean; generation: number } {
    return { listening: this.listener !== undefined, generation: this.listens };
  }

  version(kind: FeedKind): number {
    return this.versions.get(kind) ?? 0;
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

  async close(): Promise<void> {
    this.closed = true;
    for (const waiter of [...this.waiters]) waiter();
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => undefined);
  }

  private bump(kinds: readonly FeedKind[]): void {
    for (const kind of kinds) this.versions.set(kind, this.version(kind) + 1);
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
    this.listens++;
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
