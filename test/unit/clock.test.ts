import { describe, expect, it } from 'vitest';
import { clock, installClock } from '../../src/util/clock.js';

/** Installed clocks are process-wide; uninstalling in any order ends on the system clock. */
describe('installClock', () => {
  it('uses the newest clock still installed, and the system clock once none is', () => {
    const restoreA = installClock({ now: () => 1_000 });
    const restoreB = installClock({ now: () => 2_000 });
    expect(clock.now()).toBe(2_000);
    restoreA(); // the older one first (two servers stopped the other way round)
    expect(clock.now()).toBe(2_000);
    restoreB();
    expect(Math.abs(clock.now() - Date.now())).toBeLessThan(60_000);
    restoreB(); // twice is harmless
    expect(Math.abs(clock.now() - Date.now())).toBeLessThan(60_000);
  });

  it('puts the older clock back when the newer one is uninstalled', () => {
    const restoreA = installClock({ now: () => 1_000 });
    const restoreB = installClock({ now: () => 2_000 });
    restoreB();
    expect(clock.now()).toBe(1_000);
    restoreA();
    expect(Math.abs(clock.now() - Date.now())).toBeLessThan(60_000);
  });
});
