/**
 * When a failed back-channel logout delivery is tried again: exponential backoff from 30 s,
 * doubling to at most an hour between attempts, for as long as the retry window allows (counted
 * from when the logout was queued). A receiver that is down for a deploy gets the logout within
 * seconds to minutes of coming back; one down for a day no longer costs an attempt a minute.
 */
const FIRST_RETRY_DELAY_MS = 30_000;
const MAX_RETRY_DELAY_MS = 3_600_000;

/** The wait after the `failures`-th failed attempt (1 = the first one failed). */
export function retryDelay(failures: number): number {
  const doublings = Math.min(Math.max(failures - 1, 0), 20);
  return Math.min(FIRST_RETRY_DELAY_MS * 2 ** doublings, MAX_RETRY_DELAY_MS);
}

/**
 * When to try next after the `failures`-th failure at `now` (ms), or undefined to give up: the
 * next attempt would come after `queuedAt + retryForMs`.
 */
export function nextAttemptAt(queuedAt: number, failures: number, now: number, retryForMs: number): number | undefined {
  const next = now + retryDelay(failures);
  return next <= queuedAt + retryForMs ? next : undefined;
}
