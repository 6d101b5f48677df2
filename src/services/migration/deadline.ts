import { ApiError } from '../../model/errors.js';

/**
 * The `timeout` of an export or import: checked between steps, so a call that runs out stops at
 * the next step boundary and fails with DeadlineExceeded (504) instead of running on.
 */
export class Deadline {
  readonly at: number;

  constructor(
    readonly timeoutMs: number,
    private readonly what: string,
    private readonly now: () => number = Date.now,
  ) {
    this.at = now() + timeoutMs;
  }

  get expired(): boolean {
    return this.now() >= this.at;
  }

  /** Milliseconds left (0 when expired). */
  get remainingMs(): number {
    return Math.max(0, this.at - this.now());
  }

  /** Throws DeadlineExceeded once the time is up; `progress` tells what was done by then. */
  check(progress?: string): void {
    if (this.expired) throw this.exceeded(progress);
  }

  exceeded(progress?: string): ApiError {
    return new ApiError('DeadlineExceeded', 'IMPORT-T1me0', `the ${this.what} ran out of time (timeout ${this.timeoutMs / 1000}s)${progress ? `: ${progress}` : ''}`);
  }

  /** Races a promise against the deadline. */
  async race<T>(work: Promise<T>, progress?: string, onTimeout?: () => void): Promise<T> {
    this.check(progress);
    let timer: NodeJS.Timeout | undefined;
    const expiry = new Promise<never>((_, reject) => {
      // setTimeout fires at once for more than 2^31-1 ms (~24.8 days); no import runs that long.
      timer = setTimeout(
        () => {
          onTimeout?.();
          reject(this.exceeded(progress));
        },
        Math.min(this.remainingMs, 2 ** 31 - 1),
      );
    });
    try {
      return await Promise.race([work, expiry]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Lets other requests run during a long import or export. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
