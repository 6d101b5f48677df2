import { afterEach, describe, expect, it } from 'vitest';
import { IssuedTokensActor } from '../../src/actors/issued-tokens.js';
import { IssuedTokensReader } from '../../src/actors/issued-tokens-reader.js';
import type { Storage } from '../../src/storage/db.js';
import { openTempStorage, type TempStorage } from '../helpers/temp-storage.js';

/**
 * Revocations are in the main thread's memory at once, but the HTTP acceptor threads read them
 * from LMDB: a repeated revocation must not be answered before the first one's record is durable,
 * and one whose write failed must be written again.
 */
let temp: TempStorage;
afterEach(async () => {
  await temp?.close();
});

/** The storage with `durable` held until the test releases (or fails) each write. */
function heldStorage(storage: Storage) {
  const held: { release: () => void; fail: (error: Error) => void }[] = [];
  const durable = <T>(write: Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      held.push({ release: () => void write.then(resolve, reject), fail: (error) => void write.then(() => reject(error), reject) });
    });
  return { storage: { ...storage, durable } as Storage, held };
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
    it(`a ${kind} revoked again is answered only once the first write is durable, and written again after a failure`, async () => {
      temp = openTempStorage('issued-tokens');
      const { storage, held } = heldStorage(temp.storage);
      const actor = new IssuedTokensActor(storage);
      const exp = Math.floor(Date.now() / 1000) + 3600;
      const revoke = () => (kind === 'jwt' ? actor.revokeJwt('j1', exp) : kind === 'grant' ? actor.revokeGrant('g1', exp) : actor.revokeSession('s1', exp));
      const reader = new IssuedTokensReader(temp.storage);
      const recorded = () => {
        temp.storage.freshReads();
        temp.storage.root.resetReadTxn();
        return kind === 'jwt' ? reader.isJwtRevoked('j1') : kind === 'grant' ? reader.isGrantRevoked('g1') : reader.isSessionEnded('s1');
      };

      // The first write fails: the repeat is not answered from memory, it writes again.
      const first = revoke();
      await turns();
      expect(held).toHaveLength(1);
      held[0]!.fail(new Error('fsync failed'));
      await expect(first).rejects.toThrow('fsync failed');
      const second = revoke();
      await turns();
      expect(held).toHaveLength(2);
      // A third call while the second write is in flight waits for it.
      const third = revoke();
      const thirdDone = settledYet(third);
      await turns();
      expect(held).toHaveLength(2);
      expect(thirdDone()).toBe(false);
      held[1]!.release();
      await second;
      await third;
      expect(recorded()).toBe(true);
      // Once durable, a repeat is answered at once without writing.
      await revoke();
      expect(held).toHaveLength(2);
    });
  }
});
