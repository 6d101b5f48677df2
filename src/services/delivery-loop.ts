import type { Outbox, OutboxEntry } from '../actors/outbox.js';
import { clock } from '../util/clock.js';
import { nextAttemptAt } from '../domain/delivery-retries.js';
import { log } from '../util/log.js';

/**
 * The loop that empties a durable outbox (src/actors/outbox.ts) in the background, on the one
 * thread that delivers: what is due at start (left from before a restart), what any thread or node
 * queues (the store's change feed wakes it), and every few seconds what came due. At most
 * `concurrency` attempts run at once and a quarter of them for one receiver, so one hanging
 * receiver cannot hold every slot. An attempt (claim, send, record the outcome) is the caller's.
 */
export interface DeliveryLoopOptions<R extends OutboxEntry> {
  /** For log lines. */
  name: string;
  concurrency: number;
  /** Who receives a row (an app, a mail domain): attempts per receiver are bounded. */
  receiverOf(row: R): string;
  /** One attempt: claims the row, tries it, records the outcome; `signal` aborts on stop. */
  attempt(row: R, signal: AbortSignal): Promise<void>;
  /** Before each pass (outside any request): the thread's copies take what other threads committed. */
  beforePass?(): void;
  /** How long a row is retried from when it was queued (ms). */
  retryForMs: number;
  /** A row whose retry window closed: kept for operators to see, or dropped. */
  givenUp: 'keep' | 'drop';
}

/** What became of an attempt's row (see DeliveryLoop.settle). */
export type Settled = { result: 'done' } | { result: 'released' } | { result: 'retry'; at: number } | { result: 'givenUp' };

/** How often the loop looks for rows that came due when nothing new was queued. */
const POLL_INTERVAL_MS = 5000;
/** How long one wait on the change feed lasts before the watcher looks whether it should stop. */
const FEED_WAIT_MS = 1000;
/** Rows read per pass; a longer queue is read again by the next pass, which follows at once. */
const PASS_LIMIT = 1000;

export class DeliveryLoop<R extends OutboxEntry> {
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly outbox: Outbox<R>,
    private readonly options: DeliveryLoopOptions<R>,
  ) {}

  start(): void {
    // Stopped before it started (a shutdown during start-up): nothing runs.
    if (this.stopping.signal.aborted) return;
    this.timer = setInterval(() => this.deliverInBackground(), POLL_INTERVAL_MS);
    this.timer.unref();
    void this.watchFeed();
    this.deliverInBackground();
  }

  /** Stops: attempts under way are aborted, and their rows stay queued for the next start. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopping.abort();
    await Promise.allSettled([...this.inFlight.values()]);
  }

  private async watchFeed(): Promise<void> {
    let seen = this.outbox.changes();
    while (!this.stopping.signal.aborted) {
      const now = await this.outbox.changesAfter(seen, FEED_WAIT_MS);
      if (now === seen || this.stopping.signal.aborted) continue;
      seen = now;
      this.deliverInBackground();
    }
  }

  /** A pass nobody waits for: a failure (the store unreachable) is logged, and the next pass tries again. */
  deliverInBackground(): void {
    this.deliverDue().catch((error: unknown) => log.warn(`${this.options.name} delivery pass failed; the next one tries again`, { error: String(error) }));
  }

  /**
   * Starts an attempt for each due row not under way; resolves when nothing due is left to start
   * and the attempts under way have ended. One loop at a time: a call meanwhile asks it for one
   * more pass and shares its end (tests move the clock, then call this).
   */
  deliverDue(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.pass();
        } while (this.again && !this.stopping.signal.aborted);
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /**
   * Records an attempt's outcome on its row: delivered (`error` undefined) it goes; cut short by a
   * stop it is due again at once; else it is retried with backoff (src/domain/delivery-retries.ts)
   * until the retry window closes, and then given up (kept or dropped, as the options say).
   */
  async settle(row: R, error: string | undefined, signal: AbortSignal): Promise<Settled> {
    if (error === undefined) {
      await this.outbox.done(row.id);
      return { result: 'done' };
    }
    if (signal.aborted) {
      await this.outbox.release(row.id, clock.now());
      return { result: 'released' };
    }
    const now = clock.now();
    const next = nextAttemptAt(row.queuedAt, row.failures + 1, now, this.options.retryForMs);
    if (next === undefined) {
      if (this.options.givenUp === 'keep') await this.outbox.givenUp(row.id, now, error);
      else await this.outbox.done(row.id);
      return { result: 'givenUp' };
    }
    await this.outbox.failed(row.id, next, error);
    return { result: 'retry', at: next };
  }

  private async pass(): Promise<void> {
    this.options.beforePass?.();
    const due = await this.outbox.dueAt(clock.now(), PASS_LIMIT);
    if (due.length === PASS_LIMIT) this.again = true;
    const { concurrency } = this.options;
    const perReceiver = Math.max(1, Math.floor(concurrency / 4));
    const ofReceiver = new Map<string, number>();
    let next = 0;
    while (!this.stopping.signal.aborted) {
      while (next < due.length && this.inFlight.size < concurrency) {
        const row = due[next++]!;
        if (this.inFlight.has(row.id)) continue;
        const receiver = this.options.receiverOf(row);
        const running = ofReceiver.get(receiver) ?? 0;
        if (running >= perReceiver) {
          this.again = true;
          continue;
        }
        ofReceiver.set(receiver, running + 1);
        const attempt = this.options
          .attempt(row, this.stopping.signal)
          .catch((error: unknown) => log.error(`${this.options.name}: recording an attempt failed`, { id: row.id, error: String(error) }))
          .finally(() => {
            this.inFlight.delete(row.id);
            ofReceiver.set(receiver, (ofReceiver.get(receiver) ?? 1) - 1);
          });
        this.inFlight.set(row.id, attempt);
      }
      if (this.inFlight.size === 0) return;
      await Promise.race(this.inFlight.values());
    }
  }
}
