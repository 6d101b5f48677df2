import { createHmac, timingSafeEqual } from 'node:crypto';
import { recordKind, type StorePort } from '../storage/store-port.js';
import type { MasterKey } from '../crypto/master-key.js';

/**
 * Codes mailed to people: an email verification, a password reset, an initialization, an email
 * OTP. At most one live code per person and purpose (a new one replaces the last), stored as a
 * keyed MAC (a copy of the store opens nothing without the master key), single use, expiring, and
 * void after a few wrong tries. Redeeming is one decision in the store: two requests with the same
 * code on any threads or nodes cannot both pass.
 */
export type CodePurpose = 'verifyEmail' | 'passwordReset' | 'init' | 'otpEmail' | 'passwordless';

interface StoredCode {
  mac: Uint8Array;
  createdAt: number;
  expiresAt: number;
  failures: number;
  /** What the code vouches for, checked again when it is redeemed (the address a verification was sent to). */
  subject: string;
}

export type Redemption = { result: 'ok'; subject: string; createdAt: number } | { result: 'wrong' | 'expired' | 'none' };

/** Wrong tries of one code before it is void (a new one must be sent). */
export const MAX_CODE_FAILURES = 5;

const CODES = recordKind<StoredCode>('userCodes');

export class UserCodesActor {
  private readonly macKey: Buffer;

  constructor(
    private readonly store: StorePort,
    masterKey: MasterKey,
  ) {
    this.macKey = masterKey.deriveKey('user-codes');
  }

  private mac(userId: string, purpose: CodePurpose, code: string): Buffer {
    return createHmac('sha256', this.macKey).update(`${userId}\n${purpose}\n${code}`).digest();
  }

  /** Stores a new code (the last one sent is the one that counts); resolves once durable. */
  async issue(userId: string, purpose: CodePurpose, code: string, now: number, lifetimeMs: number, subject = ''): Promise<void> {
    await this.store.durable(this.store.put(CODES, `${userId}|${purpose}`, { mac: this.mac(userId, purpose, code), createdAt: now, expiresAt: now + lifetimeMs, failures: 0, subject }));
  }

  /** Whether a live code was sent (and when), without using it. */
  async pending(userId: string, purpose: CodePurpose, now: number): Promise<{ createdAt: number; subject: string } | undefined> {
    const code = await this.store.get(CODES, `${userId}|${purpose}`);
    return code && code.expiresAt > now ? { createdAt: code.createdAt, subject: code.subject } : undefined;
  }

  /** Uses the code once: right and live, it is gone; wrong, it counts, and the fifth wrong try voids it. */
  redeem(userId: string, purpose: CodePurpose, code: string, now: number): Promise<Redemption> {
    return this.present(userId, purpose, code, now, true);
  }

  /**
   * Checks a code without using it (a link's page before the step it leads to): a wrong one counts
   * as redeem's does, so the check is no way around the bound on tries.
   */
  check(userId: string, purpose: CodePurpose, code: string, now: number): Promise<Redemption> {
    return this.present(userId, purpose, code, now, false);
  }

  private async present(userId: string, purpose: CodePurpose, code: string, now: number, use: boolean): Promise<Redemption> {
    const presented = this.mac(userId, purpose, code.trim().toUpperCase());
    let outcome: Redemption = { result: 'none' };
    await this.store.durable(
      this.store.update(CODES, `${userId}|${purpose}`, (found) => {
        if (!found) return ((outcome = { result: 'none' }), undefined);
        if (found.expiresAt <= now) return ((outcome = { result: 'expired' }), null);
        if (timingSafeEqual(Buffer.from(found.mac), presented)) return ((outcome = { result: 'ok', subject: found.subject, createdAt: found.createdAt }), use ? null : undefined);
        outcome = { result: 'wrong' };
        return found.failures + 1 >= MAX_CODE_FAILURES ? null : { ...found, failures: found.failures + 1 };
      }),
    );
    return outcome;
  }

  /** Voids a code (a reset done another way, the address changed). */
  async void(userId: string, purpose: CodePurpose): Promise<void> {
    await this.store.durable(this.store.remove(CODES, `${userId}|${purpose}`));
  }

  /** Removes codes that expired before `before`. */
  sweep(before: number): Promise<number> {
    return this.store.sweep(CODES, (code) => code.expiresAt < before);
  }
}
