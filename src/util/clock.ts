/**
 * The time Sesame's behaviour depends on (token, session, code and key lifetimes, sweeping,
 * sign-in freshness, TOTP) is read through `clock.now()`, so tests can move it instead of sleeping.
 *
 * The clock is process-wide: `startApp(config, { clock })` installs one and shutdown restores the
 * system clock. Nothing outside that programmatic option can change it (no setting, endpoint or
 * signal), so a running server always uses the system clock. Ids, log lines and operation
 * deadlines (import timeouts, shutdown drain) measure real time and keep using Date.now().
 */
export interface Clock {
  /** Milliseconds since the Unix epoch, like Date.now(). */
  now(): number;
}

const systemClock: Clock = { now: () => Date.now() };

let current: Clock = systemClock;

/** The installed clock; a drop-in for Date.now(). */
export const clock = {
  now: (): number => current.now(),
  /** Whole seconds since the epoch (JWT `iat`/`exp` style). */
  seconds: (): number => Math.floor(current.now() / 1000),
};

/** Installs a clock for the whole process; returns a function that puts the previous one back. */
export function installClock(clock: Clock): () => void {
  const previous = current;
  current = clock;
  return () => {
    if (current === clock) current = previous;
  };
}
