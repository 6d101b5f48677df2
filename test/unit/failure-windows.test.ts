import { describe, expect, it } from 'vitest';
import { FailureWindowsActor } from '../../src/actors/failure-windows.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { tempStorageEach } from '../helpers/temp-storage.js';

/** Failures in a sliding window, counted in the store: every thread counts into one window per key. */
const storage = tempStorageEach('failure-windows');

describe('failure windows', () => {
  it('counts failures from every thread into one window; blocked until the oldest leaves it; no key stored as it is', async () => {
    const masterKey = MasterKey.fromSecret('test');
    const one = new FailureWindowsActor(storage().records, masterKey).window('codes', 3, 60_000);
    const two = new FailureWindowsActor(storage().records, masterKey).window('codes', 3, 60_000);
    await Promise.all([one.fail('198.51.100.1', 1000), two.fail('198.51.100.1', 2000)]);
    expect(await one.blockedFor('198.51.100.1', 2000)).toBe(0);
    await two.fail('198.51.100.1', 3000);
    expect(await one.blockedFor('198.51.100.1', 3000)).toBe(58_000);
    expect(await two.blockedFor('198.51.100.2', 3000)).toBe(0);
    expect(await one.blockedFor('198.51.100.1', 61_000)).toBe(0);
    expect(JSON.stringify([...storage().stores.failureWindows.getRange()])).not.toContain('198.51.100');
    const actor = new FailureWindowsActor(storage().records, masterKey);
    expect(await actor.sweep(60_000, 62_999)).toBe(0);
    expect(await actor.sweep(60_000, 63_000)).toBe(1);
  });
});
