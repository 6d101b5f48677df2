import { afterEach, describe, expect, it } from 'vitest';
import { IssuedTokensActor } from '../../src/actors/issued-tokens.js';
import type { StorePort } from '../../src/storage/store-port.js';
import { openTempStorage, type TempStorage } from '../helpers/temp-storage.js';

/**
 * Revocations are read from the store by every thread: a repeated revocation must not be answered
 * before a record is durable, and one whose write failed must be written again.
 */
let temp: TempStorage;
afterEach(async () => {
  await temp?.close();
});

/** The store with each revocation's write held until the test releases (or fails) it. */
function heldStore(store: StorePort) {
  const held: { release: () => void; fail: (error: Error) => void }[] = [];
  const raiseTo: StorePort['raiseTo'] = (kind, key, value) =>
    new Promise((resolve, reject) => {
      held.push({ release: () => void store.raiseTo(kind, key, value).then(resolve, reject), fail: reject });
    });
  return { store: Object.assign(Object.create(store) as StorePort, { raiseTo }), held };
}

const settledYet = (promise: Promise<unknown>) => {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  return () => settled;
};
const turns = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};

describe('repeated revocations', () => {
  for (const kind of ['jwt', 'grant', 'session'] as const) {
    it(`a ${kind} revoked again is answered only once it is on record, and written again after a failure`, async () => {
      temp = openTempStorage('issued-tokens');
      const { store, held } = heldStore(temp.storage.records);
      const actor = new IssuedTokensActor(store);
      const exp = Math.floor(Date.now() / 1000) + 3600;
      const revoke = () => (kind === 'jwt' ? actor.revokeJwt('j1', exp) : kind === 'grant' ? actor.revokeGrant('g1', exp) : actor.revokeSession('s1', exp));
      // Another thread's view: the store alone.
      const other = new IssuedTokensActor(temp.storage.records);
      const recorded = () => {
        return kind === 'jwt' ? other.isJwtRevoked('j1') : kind === 'grant' ? other.isGrantRevoked('g1') : other.isSessionEnded('s1');
      };

      // The first write fails: the repeat writes again.
      const first = revoke();
      await turns();
      expect(held).toHaveLength(1);
      held[0]!.fail(new Error('fsync failed'));
      await expect(first).rejects.toThrow('fsync failed');
      const second = revoke();
      await turns();
      expect(held).toHaveLength(2);
      // A third call while the second write is in flight is not answered before a write of its own is durable.
      const third = revoke();
      const thirdDone = settledYet(third);
      await turns();
      expect(held).toHaveLength(3);
      held[1]!.release();
      await second;
      await turns();
      expect(thirdDone()).toBe(false);
      held[2]!.release();
      await third;
      expect(await recorded()).toBe(true);
      // Once on record, a repeat is answered at once without writing.
      await revoke();
      expect(held).toHaveLength(3);
    });
  }

  it('a revocation made on one thread holds on another, and the longer of two stays', async () => {
    temp = openTempStorage('issued-tokens');
    const one = new IssuedTokensActor(temp.storage.records);
    const two = new IssuedTokensActor(temp.storage.records);
    const now = Math.floor(Date.now() / 1000);
    await one.revokeGrant('g2~g1', now + 100);
    expect(await two.isGrantRevoked('g2')).toBe(true);
    expect(await two.isGrantRevoked('g1')).toBe(false);
    await two.revokeGrant('g2', now + 50);
    expect(temp.storage.stores.revokedGrants.get('g2')).toBe(now + 100);
    await two.revokeSession('s9', now + 10);
    expect(await one.isGrantRevoked('g3~@s9')).toBe(true);
    // Swept once every token it covers has expired, not before.
    expect(await one.sweep((now + 20) * 1000)).toBe(1);
    expect(await one.isSessionEnded('s9')).toBe(false);
    expect(await two.isGrantRevoked('g2')).toBe(true);
  });
});
