import type { Outbox, OutboxEntry } from '../../actors/outbox.js';
import type { SmtpConfig, SmtpConfigsActor } from '../../actors/smtp-configs.js';
import type { View } from '../../util/readonly.js';
import type { MasterKey } from '../../crypto/master-key.js';
import { recordMail } from '../../observability/recorder.js';
import { clock } from '../../util/clock.js';
import { newId } from '../../util/ids.js';
import { log } from '../../util/log.js';
import { DeliveryLoop } from '../delivery-loop.js';
import { describeSmtpError, sendMail, type OutgoingMail } from './smtp-sender.js';

/**
 * Mail goes out through a durable outbox: the request that causes a mail (a code sent, a password
 * changed) waits for the mail's row to be committed, never for the relay. The deliverer (the main
 * thread of one node at a time per row, woken by the store's change feed) sends each through the
 * active SMTP configuration, retrying with backoff until the retry window closes; a mail given up
 * stays listed (`/admin/v1/mails/_search`) for a week. A mail's content carries codes, so it is
 * sealed with the master key in the store; recipient, kind and outcome are in the clear for operators.
 */
export type MailKind = 'InitCode' | 'PasswordReset' | 'VerifyEmail' | 'VerifyEmailOTP' | 'PasswordChange' | 'DomainClaimed' | 'VerifyPhone' | 'PasswordlessRegistration' | 'InviteUser';

export interface QueuedMail extends OutboxEntry {
  kind: MailKind;
  orgId: string;
  userId?: string;
  to: string;
  language: string;
  /** { subject, html, text }, sealed. */
  sealed: Uint8Array;
}

export interface MailToQueue extends OutgoingMail {
  kind: MailKind;
  orgId: string;
  userId?: string;
  language: string;
}

export interface MailPolicy {
  /** How long a mail is retried from when it was queued (ms). */
  retryForMs: number;
  /** Deadline of each SMTP step (ms). */
  timeoutMs: number;
  /** Mails handed to relays at once. */
  concurrency: number;
  /** Certificates trusted for the relay besides the system's. */
  ca?: string | undefined;
}

/** How long given-up mails stay listed. */
export const GIVEN_UP_KEPT_MS = 7 * 24 * 3_600_000;
/** A claimed row is held this much longer than the SMTP deadline allows (several steps, recording the outcome). */
const CLAIM_MARGIN_MS = 30_000;

export class Mailer {
  private readonly loop: DeliveryLoop<QueuedMail> | undefined;

  constructor(
    /** The store's mail outbox (`new Outbox<QueuedMail>(…, 'mailOutbox', 'mail')`). */
    readonly outbox: Outbox<QueuedMail>,
    private readonly smtp: SmtpConfigsActor,
    private readonly masterKey: MasterKey,
    private readonly policy: MailPolicy,
    /** Whether this thread delivers (the main thread) or only queues (an HTTP acceptor thread). */
    delivers: boolean,
    beforePass?: () => void,
  ) {
    this.loop = delivers
      ? new DeliveryLoop(this.outbox, {
          name: 'mail',
          concurrency: policy.concurrency,
          receiverOf: (row) => row.to.slice(row.to.lastIndexOf('@') + 1).toLowerCase(),
          attempt: (row, signal) => this.attempt(row, signal),
          retryForMs: policy.retryForMs,
          givenUp: 'keep',
          ...(beforePass ? { beforePass } : {}),
        })
      : undefined;
  }

  /** Queues a mail; resolves once its row is durable (delivery happens in the background). */
  async queue(mail: MailToQueue): Promise<void> {
    const now = clock.now();
    const { subject, html, text, ...about } = mail;
    const row: QueuedMail = {
      id: newId(),
      ...about,
      sealed: this.masterKey.encrypt(Buffer.from(JSON.stringify({ subject, html, text }), 'utf8')),
      queuedAt: now,
      failures: 0,
      dueAt: now,
    };
    await this.outbox.enqueue([row]);
    recordMail('queued');
    this.loop?.deliverInBackground();
  }

  /** Sends at once, not through the outbox (an SMTP configuration's test): the relay's refusal is the caller's. */
  sendNow(config: View<SmtpConfig>, password: string | undefined, mail: OutgoingMail): Promise<void> {
    return sendMail(config, password, mail, { timeoutMs: this.policy.timeoutMs, ca: this.policy.ca });
  }

  /** The sealed content of a queued mail. */
  contentOf(row: QueuedMail): OutgoingMail {
    return { to: row.to, ...(JSON.parse(this.masterKey.decrypt(row.sealed).toString('utf8')) as Omit<OutgoingMail, 'to'>) };
  }

  start(): void {
    if (!this.loop) throw new Error('this thread only queues mail');
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop?.stop();
  }

  /** Mails waiting for their next attempt are due at once (a relay was just activated). */
  dueNow(): Promise<void> {
    return this.outbox.allDueNow(clock.now(), 10_000);
  }

  /** Sends what is due now (tests move the clock, then call this). */
  deliverDue(): Promise<void> {
    return this.loop?.deliverDue() ?? Promise.resolve();
  }

  private async attempt(row: QueuedMail, signal: AbortSignal): Promise<void> {
    const about = { id: row.id, kind: row.kind, orgId: row.orgId, userId: row.userId };
    const claimedAt = clock.now();
    if (!(await this.outbox.claim(row.id, claimedAt, claimedAt + 4 * this.policy.timeoutMs + CLAIM_MARGIN_MS))) return;
    let error: string | undefined;
    const config = this.smtp.active();
    if (!config) {
      error = 'no active SMTP configuration (add one and activate it: POST /admin/v1/smtp, …/_activate)';
    } else {
      try {
        await this.sendNow(config, this.smtp.password(config), this.contentOf(row));
      } catch (failure) {
        error = describeSmtpError(failure);
      }
    }
    const settled = await this.loop!.settle(row, error, signal);
    const attempts = row.failures + 1;
    if (settled.result === 'done') {
      recordMail('sent');
      log.info('mail sent', { ...about, attempts });
    } else if (settled.result === 'givenUp') {
      recordMail('given_up');
      log.warn('mail given up: retry window closed', { ...about, attempts, error });
    } else if (settled.result === 'retry') {
      recordMail('failed_attempt');
      log.info('mail attempt failed, will retry', { ...about, attempts, retryAt: new Date(settled.at).toISOString(), error });
    }
  }
}
