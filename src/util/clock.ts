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

/**
 * A clock that stands still until moved, or follows the system clock from a floor. Its state
 * lives in shared memory, so the HTTP acceptor threads read the very time the main thread's
 * clock shows (`clockIn` on the cell); tests move it instead of sleeping.
 */
export class ManualClock implements Clock {
  /** [time the clock stands at (ms), 1 while it follows the system clock] */
  private readonly state: Float64Array;

  constructor(at = Date.now(), cell?: SharedArrayBuffer) {
    this.state = new Float64Array(cell ?? new SharedArrayBuffer(16));
    if (!cell) this.state[0] = at;
  }

  /** The shared memory holding this clock's state (hand it to another thread's `clockIn`). */
  get cell(): SharedArrayBuffer {
    return this.state.buffer as SharedArrayBuffer;
  }

  /** Whether the clock follows the system clock (never going back below the time it was moved to). */
  get follows(): boolean {
    return this.state[1] === 1;
  }

  set follows(on: boolean) {
    if (!on) this.state[0] = this.now();
    this.state[1] = on ? 1 : 0;
  }

  now(): number {
    const at = this.state[0]!;
    return this.state[1] === 1 ? Math.max(at, Date.now()) : at;
  }

  advance(ms: number): void {
    this.state[0] = this.now() + ms;
  }
}

/** The clock whose state is in `cell` (see ManualClock.cell), or the system clock when there is none. */
export function clockIn(cell: SharedArrayBuffer | undefined): Clock {
  return cell ? new ManualClock(0, cell) : systemClock;
}

/** The shared cell of the installed clock, for threads that must read the same time (undefined: the system clock). */
export function installedClockCell(): SharedArrayBuffer | undefined {
  if (current === systemClock) return undefined;
  // By shape, not class: the tests' clock may come from another copy of this module.
  const cell = (current as Partial<ManualClock>).cell;
  if (cell instanceof SharedArrayBuffer) return cell;
  throw new Error('a clock that other threads cannot read is installed; use ManualClock (or one HTTP thread)');
}
