import { afterEach, describe, expect, it } from 'vitest';
import { ReplayGuardActor } from '../../src/actors/replay-guard.js';
import { openTempStorage, type TempStorage } from '../helpers/temp-storage.js';

/**
 * The replay guard shared by HTTP threads: first use decided in LMDB (two guards on one store,
 * as two threads have), memory that does not keep what the store keeps, and a sweep that clears
 * every expired entry, however many chunks that takes.
 */
let temp: TempStorage;
afterEach(async () => {
  await temp?.close();
});

describe('shared replay guard', () => {
  it('decides first use across guards on one store, at once and later, and keeps no memory of it', async () => {
    temp = openTempStorage('replay-guard');
    const { storage } = temp;
    const a = new ReplayGuardActor(storage.records);
    const b = new ReplayGuardActor(storage.records);
    const now = 1_000_000;
    const together = await Promise.all([a.firstUse('k1', now + 60, now), b.firstUse('k1', now + 60, now), a.firstUse('k1', now + 60, now)]);
    expect(together.filter(Boolean)).toHaveLength(1);
    expect(await b.firstUse('k1', now + 60, now)).toBe(false);
    for (let i = 0; i < 100; i++) expect(await a.firstUse(`other-${i}`, now + 60, now)).toBe(true);
    expect((a as unknown as { deciding: Map<string, number> }).deciding.size).toBe(0);
  });

  it('sweeps every expired entry of the store in one sweep, across chunks', async () => {
    temp = openTempStorage('replay-guard-sweep');
    const { storage } = temp;
    const guard = new ReplayGuardActor(storage.records);
    const now = 1_000_000;
    await Promise.all(Array.from({ length: 4500 }, (_, i) => guard.firstUse(`old-${String(i).padStart(5, '0')}`, now - 100, now - 200)));
    await Promise.all(Array.from({ length: 10 }, (_, i) => guard.firstUse(`live-${i}`, now + 600, now)));
    expect(await guard.sweep(now)).toBe(4500);
    expect([...storage.usedAssertions.getKeys()].sort()).toEqual(Array.from({ length: 10 }, (_, i) => `live-${i}`).sort());
  });
});
