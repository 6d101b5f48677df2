import type { BackchannelLogoutsActor, PendingLogout } from '../../actors/backchannel-logouts.js';
import type { ClientsReader } from '../../actors/clients.js';
import type { UserSession } from '../../actors/user-sessions.js';
import { nextAttemptAt } from '../../domain/delivery-retries.js';
import { clock } from '../../util/clock.js';
import { log } from '../../util/log.js';
import type { View } from '../../util/readonly.js';
import type { LogoutTokens } from './logout-tokens.js';
import { sendLogoutToken, type DeliveryOutcome } from './logout-sender.js';

/**
 * OpenID Connect Back-Channel Logout 1.0 on the provider's side: when sessions end, each app that
 * received tokens in one of them and has a back-channel logout URI is queued a logout (durably,
 * in the outbox actor), and a loop on the main thread delivers what is due, in the background:
 * the request that ended the session waits for the queueing (a local commit), never for a
 * receiver. A failed attempt is retried with backoff (src/domain/delivery-retries.ts) until the
 * retry window closes; then the logout is logged and dropped.
 */
export interface DeliveryPolicy {
  /** How long a logout is retried, from when it was queued (ms). */
  retryForMs: number;
  /** Deadline of one attempt (ms). */
  timeoutMs: number;
  /** Attempts under way at once, across all receivers. */
  concurrency: number;
}

/** How often the loop looks for due logouts when nothing new was queued (retries are 30 s apart at least). */
const POLL_INTERVAL_MS = 5000;
/** How long one wait on the change feed lasts before the watcher looks whether it should stop. */
const FEED_WAIT_MS = 1000;
/** A claimed row is held this much longer than an attempt's deadline (signing, recording the outcome). */
const CLAIM_MARGIN_MS = 30_000;

export class LogoutDeliveries {
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly stopping = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  /** The delivery loop while it runs, and whether another pass was asked for meanwhile. */
  private running: Promise<void> | undefined;
  private again = false;

  constructor(
    private readonly clients: ClientsReader,
    private readonly outbox: BackchannelLogoutsActor,
    private readonly tokens: LogoutTokens,
    private readonly policy: DeliveryPolicy,
    /**
     * Whether this thread delivers (the main thread) or only queues (an HTTP acceptor thread, whose
     * queueings wake the deliverer through the store's change feed).
     */
    private readonly delivers = true,
    /** Before each pass (it runs outside any request): the thread's copy of the directory takes what other threads committed (a receiver saved there). */
    private readonly beforePass: () => void = () => {},
  ) {}

  /** Logouts queued and not yet delivered or given up. */
  pending(): Promise<number> {
    return this.outbox.size();
  }

  /**
   * Queues a logout for each app that received tokens in one of these (ending) sessions and has a
   * back-channel logout URI. Resolves once they are durable; delivery starts in the background.
   */
  async queue(sessions: readonly View<UserSession>[]): Promise<void> {
    const logouts = [];
    for (const session of sessions) {
      for (const clientId of session.clients ?? []) {
        if (this.receiverOf(clientId)) logouts.push({ clientId, sub: session.userId, sid: session.id });
      }
    }
    if (logouts.length === 0) return;
    await this.outbox.enqueue(logouts, clock.now());
    if (this.delivers) this.deliverInBackground();
  }

  /**
   * Delivers in the background from now on: what is due now (left from before a restart), what any
   * thread queues (as the change feed announces it), and every few seconds what came due.
   */
  start(): void {
    if (!this.delivers) throw new Error('this thread only queues back-channel logouts');
    this.timer = setInterval(() => this.deliverInBackground(), POLL_INTERVAL_MS);
    this.timer.unref();
    void this.watchFeed();
    this.deliverInBackground();
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
  private deliverInBackground(): void {
    this.deliverDue().catch((error: unknown) => log.warn('back-channel logout delivery pass failed; the next one tries again', { error: String(error) }));
  }

  /** Stops delivering: attempts under way are aborted and their logouts stay queued for the next start. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.stopping.abort();
    await Promise.allSettled([...this.inFlight.values()]);
  }

  /**
   * Starts an attempt for each due logout not under way (at most `concurrency` at once); resolves
   * when nothing due is left to start and the attempts under way have ended. The loop's timer
   * calls it, and so does RunningApp.tick() (tests move the clock, then tick).
   */
  deliverDue(): Promise<void> {
    // One loop at a time: a call while it runs asks it for one more pass (new logouts, the timer)
    // and shares its end, instead of starting loops that would pile up during a backlog.
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.deliverPass();
        } while (this.again && !this.stopping.signal.aborted);
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  /**
   * One pass over the logouts due when it starts, longest waiting first, each tried once: the list
   * is taken once and walked, at most `concurrency` attempts at a time and a quarter of them for
   * one app, so one hanging receiver cannot hold every slot. Rows passed over for that reason are
   * left to the next pass, which follows at once.
   */
  private async deliverPass(): Promise<void> {
    this.beforePass();
    const due = await this.outbox.due(clock.now());
    const perApp = Math.max(1, Math.floor(this.policy.concurrency / 4));
    const ofApp = new Map<string, number>();
    let next = 0;
    while (!this.stopping.signal.aborted) {
      while (next < due.length && this.inFlight.size < this.policy.concurrency) {
        const row = due[next++]!;
        const running = ofApp.get(row.clientId) ?? 0;
        if (running >= perApp) {
          this.again = true;
          continue;
        }
        ofApp.set(row.clientId, running + 1);
        const attempt = this.attempt(row)
          .catch((error: unknown) => log.error('back-channel logout: recording an attempt failed', { id: row.id, error: String(error) }))
          .finally(() => {
            this.inFlight.delete(row.id);
            ofApp.set(row.clientId, (ofApp.get(row.clientId) ?? 1) - 1);
          });
        this.inFlight.set(row.id, attempt);
      }
      if (this.inFlight.size === 0) return;
      await Promise.race(this.inFlight.values());
    }
  }

  /** The app's back-channel logout URI, and whether it may only be a public address (unless an instance role set it). */
  private receiverOf(clientId: string): { uri: string; publicOnly: boolean } | undefined {
    const app = this.clients.appByClient(clientId);
    const uri = app?.oidc?.backChannelLogoutUri;
    return uri ? { uri, publicOnly: app.logoutReceiverByInstance !== true } : undefined;
  }

  private async attempt(row: View<PendingLogout>): Promise<void> {
    const about = { clientId: row.clientId, sid: row.sid, sub: row.sub };
    const receiver = this.receiverOf(row.clientId);
    if (!receiver) {
      // The app was removed, or its URI since, after the logout was queued: there is no one to tell.
      log.info('back-channel logout dropped: the app no longer has a back-channel logout URI', about);
      await this.outbox.done(row.id);
      return;
    }
    const { uri } = receiver;
    // Claimed first: another deliverer (another node) does not send it meanwhile.
    const claimedAt = clock.now();
    if (!(await this.outbox.claim(row.id, claimedAt, claimedAt + this.policy.timeoutMs + CLAIM_MARGIN_MS))) return;
    let outcome: DeliveryOutcome;
    try {
      const token = await this.tokens.sign(row.clientId, row.sub, row.sid);
      outcome = await sendLogoutToken(uri, token, { timeoutMs: this.policy.timeoutMs, signal: this.stopping.signal, publicOnly: receiver.publicOnly });
    } catch (error) {
      outcome = { delivered: false, reason: error instanceof Error ? error.message : String(error) };
    }
    if (outcome.delivered) {
      await this.outbox.done(row.id);
      log.info('back-channel logout delivered', { ...about, uri, attempts: row.failures + 1 });
      return;
    }
    // Cut short by shutdown: not a failure of the receiver; the row stays due for the next start.
    if (this.stopping.signal.aborted) {
      await this.outbox.release(row.id);
      return;
    }
    const now = clock.now();
    const next = nextAttemptAt(row.queuedAt, row.failures + 1, now, this.policy.retryForMs);
    if (next === undefined) {
      log.warn('back-channel logout failed for good: retry window closed, dropped', {
        ...about,
        uri,
        attempts: row.failures + 1,
        queuedAt: new Date(row.queuedAt).toISOString(),
        error: outcome.reason,
      });
      await this.outbox.done(row.id);
      return;
    }
    await this.outbox.failed(row.id, next, outcome.reason);
    log.info('back-channel logout attempt failed, will retry', { ...about, uri, attempts: row.failures + 1, retryAt: new Date(next).toISOString(), error: outcome.reason });
  }
}
