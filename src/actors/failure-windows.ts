import { createHmac } from 'node:crypto';
import { recordKind, type StorePort } from '../storage/store-port.js';
import type { MasterKey } from '../crypto/master-key.js';
import { clock } from '../util/clock.js';

/**
 * Failures counted per key (wrong user codes, open registrations: per client address) in a sliding window, in the
 * store: every HTTP thread counts into the same window, so an attacker gets the same allowance
 * however the kernel spreads their connections. After `max` failures within `windowMs` the key is
 * blocked until its oldest failure leaves the window. Keys are stored as a keyed MAC (no client
 * address on disk); a key's record goes with the sweep once its failures left the window.
 */
export interface FailureWindow {
  /** How long (ms) the key stays blocked: until enough of its failures leave the window; 0 when it is not. */
  blockedFor(key: string, now?: number): Promise<number>;
  /** Counts a failure; resolves once committed. */
  fail(key: string, now?: number): Promise<void>;
  /**
   * Counts one use if the key is not blocked, in one decision (parallel uses on any threads cannot
   * pass the bound together): true when it was counted, false when the key is blocked.
   */
  take(key: string, now?: number): Promise<boolean>;
}

const PURPOSE = 'failure-window';

/** `<window name>/<keyed MAC of the key>` → the times of its recent failures. */
const WINDOWS = recordKind<number[]>('failureWindows');

export class FailureWindowsActor {
  private readonly macKey: Buffer;

  constructor(
    private readonly store: StorePort,
    masterKey: MasterKey,
  ) {
    this.macKey = masterKey.deriveKey(PURPOSE);
  }

  /** The window of one kind of failure (`name`: no '/' in it). */
  window(name: string, max: number, windowMs: number): FailureWindow {
    const { store } = this;
    const keyOf = (key: string) => `${name}/${createHmac('sha256', this.macKey).update(key).digest('base64url')}`;
    const recent = (times: readonly number[] | undefined, now: number) => (times ?? []).filter((at) => at > now - windowMs);
    return {
      async blockedFor(key, now = clock.now()) {
        const times = recent(await store.get(WINDOWS, keyOf(key)), now);
        if (times.length < max) return 0;
        return times[times.length - max]! + windowMs - now;
      },
      async fail(key, now = clock.now()) {
        // One decision on the window as stored: parallel failures on any threads all count.
        // Committed, not synced: a crash forgets at most the last moments' failures.
        await store.update(WINDOWS, keyOf(key), (times) => [...recent(times, now), now].slice(-max));
      },
      async take(key, now = clock.now()) {
        let taken = false;
        await store.update(WINDOWS, keyOf(key), (times) => {
          const kept = recent(times, now);
          taken = kept.length < max;
          return taken ? [...kept, now] : undefined;
        });
        return taken;
      },
    };
  }

  /** Removes windows whose failures all left them (the longest window counted is `keepMs`). */
  sweep(keepMs: number, now = clock.now()): Promise<number> {
    return this.store.sweep(WINDOWS, (times) => (times.at(-1) ?? 0) <= now - keepMs);
  }
}
