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

/** Installed clocks, the newest last: the newest is in use, the system clock when none is. */
const installed: Clock[] = [];
let current: Clock = systemClock;

/** The installed clock; a drop-in for Date.now(). */
export const clock = {
  now: (): number => current.now(),
  /** Whole seconds since the epoch (JWT `iat`/`exp` style). */
  seconds: (): number => Math.floor(current.now() / 1000),
};

/**
 * Installs a clock for the whole process; returns a function that uninstalls it. Uninstalls may
 * come in any order (two servers stopped the other way round): the newest clock still installed
 * is in use, and the system clock once none is.
 */
export function installClock(clock: Clock): () => void {
  installed.push(clock);
  current = clock;
  let uninstalled = false;
  return () => {
    if (uninstalled) return;
    uninstalled = true;
    installed.splice(installed.lastIndexOf(clock), 1);
    current = installed.at(-1) ?? systemClock;
  };
}
