import type { BackchannelLogoutsActor, PendingLogout } from '../../actors/backchannel-logouts.js';
import type { ClientsReader } from '../../actors/clients.js';
import type { UserSession } from '../../actors/user-sessions.js';
import { clock } from '../../util/clock.js';
import { log } from '../../util/log.js';
import type { View } from '../../util/readonly.js';
import { DeliveryLoop } from '../delivery-loop.js';
import type { LogoutTokens } from './logout-tokens.js';
import { sendLogoutToken, type DeliveryOutcome } from './logout-sender.js';

/**
 * OpenID Connect Back-Channel Logout 1.0 on the provider's side: when sessions end, each app that
 * received tokens in one of them and has a back-channel logout URI is queued a logout (durably,
 * in the outbox actor), and the delivery loop (src/services/delivery-loop.ts, on the main thread)
 * delivers what is due, in the background: the request that ended the session waits for the
 * queueing (a commit), never for a receiver. A failed attempt is retried with backoff
 * (src/domain/delivery-retries.ts) until the retry window closes; then the logout is logged and dropped.
 */
export interface DeliveryPolicy {
  /** How long a logout is retried, from when it was queued (ms). */
  retryForMs: number;
  /** Deadline of one attempt (ms). */
  timeoutMs: number;
  /** Attempts under way at once, across all receivers. */
  concurrency: number;
}

/** A claimed row is held this much longer than an attempt's deadline (signing, recording the outcome). */
const CLAIM_MARGIN_MS = 30_000;

export class LogoutDeliveries {
  private readonly loop: DeliveryLoop<PendingLogout> | undefined;

  constructor(
    private readonly clients: ClientsReader,
    private readonly outbox: BackchannelLogoutsActor,
    private readonly tokens: LogoutTokens,
    private readonly policy: DeliveryPolicy,
    /**
     * Whether this thread delivers (the main thread) or only queues (an HTTP acceptor thread, whose
     * queueings wake the deliverer through the store's change feed).
     */
    delivers = true,
    /** Before each pass (it runs outside any request): the thread's copy of the directory takes what other threads committed (a receiver saved there). */
    beforePass?: () => void,
  ) {
    this.loop = delivers
      ? new DeliveryLoop(outbox.outbox, {
          name: 'back-channel logout',
          concurrency: policy.concurrency,
          receiverOf: (row) => row.clientId,
          attempt: (row, signal) => this.attempt(row, signal),
          retryForMs: policy.retryForMs,
          givenUp: 'drop',
          ...(beforePass ? { beforePass } : {}),
        })
      : undefined;
  }

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
    this.loop?.deliverInBackground();
  }

  /** Delivers in the background from now on (rows an older Sesame queued get their due-time index first). */
  start(): void {
    if (!this.loop) throw new Error('this thread only queues back-channel logouts');
    const loop = this.loop;
    this.outbox
      .reindex()
      .catch((error: unknown) => log.warn('back-channel logout: indexing queued logouts failed', { error: String(error) }))
      .finally(() => loop.start());
  }

  /** Stops delivering: attempts under way are aborted and their logouts stay queued for the next start. */
  async stop(): Promise<void> {
    await this.loop?.stop();
  }

  /** Sends what is due now (RunningApp.tick(): tests move the clock, then tick). */
  deliverDue(): Promise<void> {
    return this.loop?.deliverDue() ?? Promise.resolve();
  }

  /** The app's back-channel logout URI, and whether it may only be a public address (unless an instance role set it). */
  private receiverOf(clientId: string): { uri: string; publicOnly: boolean } | undefined {
    const app = this.clients.appByClient(clientId);
    const uri = app?.oidc?.backChannelLogoutUri;
    return uri ? { uri, publicOnly: app.logoutReceiverByInstance !== true } : undefined;
  }

  private async attempt(row: PendingLogout, signal: AbortSignal): Promise<void> {
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
      outcome = await sendLogoutToken(uri, token, { timeoutMs: this.policy.timeoutMs, signal, publicOnly: receiver.publicOnly });
    } catch (error) {
      outcome = { delivered: false, reason: error instanceof Error ? error.message : String(error) };
    }
    const settled = await this.loop!.settle(row, outcome.delivered ? undefined : outcome.reason, signal);
    const attempts = row.failures + 1;
    if (settled.result === 'done') {
      log.info('back-channel logout delivered', { ...about, uri, attempts });
    } else if (settled.result === 'givenUp') {
      log.warn('back-channel logout failed for good: retry window closed, dropped', {
        ...about,
        uri,
        attempts,
        queuedAt: new Date(row.queuedAt).toISOString(),
        error: outcome.delivered ? undefined : outcome.reason,
      });
    } else if (settled.result === 'retry') {
      log.info('back-channel logout attempt failed, will retry', { ...about, uri, attempts, retryAt: new Date(settled.at).toISOString(), error: outcome.delivered ? undefined : outcome.reason });
    }
  }
}
