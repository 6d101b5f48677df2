import { afterEach, describe, expect, it } from 'vitest';
import { FailureWindowsActor } from '../../src/actors/failure-windows.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { openTempStorage, type TempStorage } from '../helpers/temp-storage.js';

/** Failures in a sliding window, counted in the store: every thread counts into one window per key. */
let temp: TempStorage;
afterEach(async () => {
  await temp?.close();
});

describe('failure windows', () => {
  it('counts failures from every thread into one window; blocked until the oldest leaves it; no key stored as it is', async () => {
    temp = openTempStorage('failure-windows');
    const masterKey = MasterKey.fromSecret('test');
    const one = new FailureWindowsActor(temp.storage, masterKey).window('codes', 3, 60_000);
    const two = new FailureWindowsActor(temp.storage, masterKey).window('codes', 3, 60_000);
    await Promise.all([one.fail('198.51.100.1', 1000), two.fail('198.51.100.1', 2000)]);
    expect(one.blockedFor('198.51.100.1', 2000)).toBe(0);
    await two.fail('198.51.100.1', 3000);
    expect(one.blockedFor('198.51.100.1', 3000)).toBe(58_000);
    expect(two.blockedFor('198.51.100.2', 3000)).toBe(0);
    expect(one.blockedFor('198.51.100.1', 61_000)).toBe(0);
    expect(JSON.stringify([...temp.storage.stores.failureWindows.getRange()])).not.toContain('198.51.100');
    const actor = new FailureWindowsActor(temp.storage, masterKey);
    expect(await actor.sweep(60_000, 62_999)).toBe(0);
    expect(await actor.sweep(60_000, 63_000)).toBe(1);
  });
});
