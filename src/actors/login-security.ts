import { recordKind, type StorePort } from '../storage/store-port.js';
import { clock } from '../util/clock.js';
import { STEP_SECONDS } from '../crypto/totp.js';

/**
 * The login's security state per user, decided in the store so that every HTTP thread (and later
 * every node) counts alike, and kept across restarts (a restart must not let a TOTP code be used
 * twice, nor reset the limit on guesses): the last TOTP time step used (a code is accepted once)
 * and the recent wrong TOTP codes across all login requests (after `maxOtpFailures` within
 * `windowMs` no code is checked until the oldest leaves the window; the small code space must not
 * be brute-forced across parallel requests). Each change is one decision on the record as stored,
 * resolved once durable.
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

const SECURITY = recordKind<LoginSecurityRecord>('loginSecurity');

export class LoginSecurityActor {
  constructor(
    private readonly store: StorePort,
    private readonly maxOtpFailures = MAX_OTP_FAILURES,
    private readonly windowMs = OTP_FAILURE_WINDOW_MS,
  ) {}

  private recent(record: LoginSecurityRecord | undefined, now: number): number[] {
    return (record?.otpFailures ?? []).filter((at) => at > now - this.windowMs);
  }

  /** Whether the user has had too many wrong TOTP codes lately: no code is checked. */
  async otpBlocked(userId: string, now = clock.now()): Promise<boolean> {
    return this.recent(await this.store.get(SECURITY, userId), now).length >= this.maxOtpFailures;
  }

  /** Whether a code of this time step would be new for the user (no later or equal step was used). */
  async otpStepUnused(userId: string, step: number): Promise<boolean> {
    return step > ((await this.store.get(SECURITY, userId))?.lastOtpStep ?? -1);
  }

  /**
   * Takes one TOTP check for the user, in one decision: undefined while the user is blocked;
   * otherwise the attempt counts at once as a wrong code (its time is returned), so checks started
   * together on any thread cannot all pass the block before their failures are counted. A right
   * code takes it back (passOtp clears the wrong codes; an enrollment removes this attempt).
   */
  async takeOtpAttempt(userId: string, now = clock.now()): Promise<number | undefined> {
    let taken = false;
    await this.decide(userId, (found) => {
      const recent = this.recent(found, now);
      // Set on every run: the store may decide again on a record changed meanwhile.
      taken = recent.length < this.maxOtpFailures;
      if (!taken) return undefined;
      return { ...this.base(userId, found), otpFailures: [...recent, now] };
    });
    return taken ? now : undefined;
  }

  /**
   * A TOTP code of `step` passed a check: the step is used up (for parallel requests on any thread
   * too: one of them wins) and the user's wrong codes are forgotten. False when the step (or a
   * later one) was used already.
   */
  passOtp(userId: string, step: number): Promise<boolean> {
    return this.useStep(userId, step, () => []);
  }

  /**
   * A code other than TOTP passed a check (one mailed for this sign-in, used up where it is stored):
   * the user's wrong codes are forgotten, as a right TOTP code forgets them (passOtp).
   */
  async passOtherCode(userId: string): Promise<void> {
    await this.decide(userId, (found) => (found && found.otpFailures.length > 0 ? { ...found, otpFailures: [] } : undefined));
  }

  /**
   * A TOTP code of `step` confirmed an enrollment: the step is used up, and the attempt taken for
   * it (`attempt`, from takeOtpAttempt) no longer counts; earlier wrong codes still do. False when
   * the step was used already.
   */
  useOtpStepForEnrollment(userId: string, step: number, attempt?: number): Promise<boolean> {
    return this.useStep(userId, step, (found) => {
      const failures = [...(found?.otpFailures ?? [])];
      const at = attempt === undefined ? -1 : failures.lastIndexOf(attempt);
      if (at !== -1) failures.splice(at, 1);
      return failures;
    });
  }

  private async useStep(userId: string, step: number, failures: (found: LoginSecurityRecord | undefined) => number[]): Promise<boolean> {
    let used = false;
    await this.decide(userId, (found) => {
      used = step > (found?.lastOtpStep ?? -1);
      if (!used) return undefined;
      return { id: userId, lastOtpStep: step, otpFailures: failures(found) };
    });
    return used;
  }

  private base(userId: string, found: LoginSecurityRecord | undefined): LoginSecurityRecord {
    return found ? { ...found, otpFailures: [...found.otpFailures] } : { id: userId, otpFailures: [] };
  }

  private decide(userId: string, next: (found: LoginSecurityRecord | undefined) => LoginSecurityRecord | undefined): Promise<unknown> {
    return this.store.durable(this.store.update(SECURITY, userId, next));
  }

  /** Forgets users with no recent wrong code whose last used step could not be presented any more. */
  sweep(now = clock.now()): Promise<number> {
    // verifyTotp accepts the current step and its neighbours.
    const oldestUsable = Math.floor(now / 1000 / STEP_SECONDS) - 2;
    return this.store.sweep(SECURITY, (r) => (r.lastOtpStep === undefined || r.lastOtpStep < oldestUsable) && !r.otpFailures.some((at) => at > now - this.windowMs));
  }
}
