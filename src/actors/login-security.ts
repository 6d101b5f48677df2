import type { Storage } from '../storage/db.js';
import { Table } from '../storage/table.js';
import { clock } from '../util/clock.js';
import { STEP_SECONDS } from '../crypto/totp.js';

/**
 * Owns the login's security state per user, persisted like any other state (a restart must not
 * let a TOTP code be used twice, nor reset the limit on guesses): the last TOTP time step used
 * (a code is accepted once) and the recent wrong TOTP codes across all login requests (after
 * `maxOtpFailures` within `windowMs` no code is checked until the oldest leaves the window; the
 * small code space must not be brute-forced across parallel requests). Each change is visible at
 * once (so parallel requests see it) and resolves once durable.
 */
export interface LoginSecurityRecord {
  /** The user id. */
  id: string;
  /** The TOTP time step of the last code accepted. */
  lastOtpStep?: number;
  /** When wrong TOTP codes were entered (ms), those still in the window. */
  otpFailures: number[];
}

export const MAX_OTP_FAILURES = 10;
export const OTP_FAILURE_WINDOW_MS = 15 * 60_000;

export class LoginSecurityActor {
  private readonly records: Table<LoginSecurityRecord>;

  constructor(
    storage: Storage,
    private readonly maxOtpFailures = MAX_OTP_FAILURES,
    private readonly windowMs = OTP_FAILURE_WINDOW_MS,
  ) {
    this.records = new Table(storage.stores.loginSecurity, storage.durable);
  }

  private recentFailures(userId: string, now: number): readonly number[] {
    const failures = this.records.get(userId)?.otpFailures ?? [];
    return failures.every((at) => at > now - this.windowMs) ? failures : failures.filter((at) => at > now - this.windowMs);
  }

  /** Whether the user has had too many wrong TOTP codes lately: no code is checked. */
  otpBlocked(userId: string, now = clock.now()): boolean {
    return this.recentFailures(userId, now).length >= this.maxOtpFailures;
  }

  /** Whether a code of this time step would be new for the user (no later or equal step was used). */
  otpStepUnused(userId: string, step: number): boolean {
    return step > (this.records.get(userId)?.lastOtpStep ?? -1);
  }

  /** A wrong TOTP code of the user (counted at once). */
  async recordOtpFailure(userId: string, now = clock.now()): Promise<void> {
    await this.records.put({ ...this.base(userId), otpFailures: [...this.recentFailures(userId, now), now] });
  }

  /**
   * A TOTP code of `step` passed a check: the step is used up (also for parallel requests, at once)
   * and the user's wrong codes are forgotten. False when the step (or a later one) was used already.
   */
  async passOtp(userId: string, step: number): Promise<boolean> {
    if (!this.otpStepUnused(userId, step)) return false;
    await this.records.put({ id: userId, lastOtpStep: step, otpFailures: [] });
    return true;
  }

  /** A TOTP code of `step` confirmed an enrollment: the step is used up. False when it was used already. */
  async useOtpStepForEnrollment(userId: string, step: number): Promise<boolean> {
    if (!this.otpStepUnused(userId, step)) return false;
    await this.records.put({ ...this.base(userId), lastOtpStep: step });
    return true;
  }

  private base(userId: string): LoginSecurityRecord {
    const record = this.records.get(userId);
    return record ? { id: userId, otpFailures: [...record.otpFailures], ...(record.lastOtpStep !== undefined ? { lastOtpStep: record.lastOtpStep } : {}) } : { id: userId, otpFailures: [] };
  }

  /** Forgets users with no recent wrong code whose last used step could not be presented any more. */
  async sweep(now = clock.now()): Promise<number> {
    // verifyTotp accepts the current step and its neighbours.
    const oldestUsable = Math.floor(now / 1000 / STEP_SECONDS) - 2;
    const stale = [...this.records.values()].filter(
      (r) => (r.lastOtpStep === undefined || r.lastOtpStep < oldestUsable) && !r.otpFailures.some((at) => at > now - this.windowMs),
    );
    await Promise.all(stale.map((r) => this.records.remove(r.id)));
    return stale.length;
  }
}
