import { describe, expect, it } from 'vitest';
import { OrgsActor } from '../../src/actors/orgs.js';
import { LeasesActor } from '../../src/actors/leases.js';
import { tempStorageEach } from '../helpers/temp-storage.js';

/**
 * People are changed as stored (Table.change), so copies of the directory on different threads
 * (here: two OrgsActors over one store, as two HTTP threads hold them) never undo each other's
 * changes, and a lease in the store runs one password check of a person at a time whichever copy
 * asks.
 */
const storage = tempStorageEach('people');

const person = (userName: string) => ({
  person: {
    userName,
    profile: { firstName: 'A', lastName: 'B', nickName: '', preferredLanguage: 'en', gender: 'GENDER_UNSPECIFIED' as const },
    email: { email: `${userName}@example.com`, isEmailVerified: true },
  },
  credentials: { passwordHash: 'hash' },
});

async function twoCopies(maxPasswordAttempts: number) {
  const s = storage();
  const main = new OrgsActor(s, 'localhost');
  await main.addOrg({ id: 'o1', name: 'One' });
  await main.setPolicy('lockout', 'o1', { maxPasswordAttempts, maxOtpAttempts: 0, showLockoutFailure: true }, true);
  await main.addUser('o1', { id: 'u1', ...person('ann') } as never);
  // The second copy loads after the writes above, as an acceptor thread does at its start.
  const other = new OrgsActor(s, 'localhost');
  return { s, main, other };
}

describe('people decided in the store', () => {
  it('failures counted from two copies at once: each counts once, the lock comes at exactly the limit', async () => {
    const { main, other } = await twoCopies(5);
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? main : other).recordPasswordFailure('u1')));
    expect(results.filter((r) => r.locked)).toHaveLength(results.length - 4);
    for (const copy of [main, other]) {
      const stored = copy.storedUser('u1')!;
      expect(stored.state).toBe('USER_STATE_LOCKED');
      // Counted past the limit (the lock stays; the count goes on, as ZITADEL shows it).
      expect(stored.human!.failedPasswordAttempts).toBe(8);
    }
  });

  it("a copy's change is made on the person as stored: another copy's lock is not undone by a stale copy's metadata, and a state change is refused by the stored state", async () => {
    const { main, other } = await twoCopies(1);
    // The other copy locks the person; main's copy still shows them active.
    expect((await other.recordPasswordFailure('u1')).locked).toBe(true);
    expect(main.getUser('u1')!.state).toBe('USER_STATE_ACTIVE');
    await main.setUserMetadata('u1', 'k', new Uint8Array([1]));
    const stored = main.storedUser('u1')!;
    expect(stored.state).toBe('USER_STATE_LOCKED');
    expect([...stored.metadata!.k!]).toEqual([1]);
    // One unlock wins, whichever copy; the other finds the person unlocked as stored.
    await expect(other.unlockUser('u1', 'o1')).resolves.toMatchObject({ state: 'USER_STATE_ACTIVE' });
    await expect(main.unlockUser('u1', 'o1')).rejects.toThrow('not locked');
  });

  it('a change refused on the stored person writes nothing: a sign-in reset meanwhile sets no password', async () => {
    const { main, other } = await twoCopies(3);
    const passedAt = 100;
    await main.setPassword('u1', 'o1', 'admin-hash', false);
    const still = (stored: { revokedBefore?: number }) => (stored.revokedBefore ?? 0) <= passedAt * 1000;
    await expect(other.changePassword('u1', 'person-hash', still)).resolves.toBeUndefined();
    expect(other.storedUser('u1')!.human!.passwordHash).toBe('admin-hash');
  });

  it('exclusive: two holders (two threads) never run one name at once; the lease is free again after a failure', async () => {
    const s = storage();
    const [a, b] = [new LeasesActor(s), new LeasesActor(s)];
    let running = 0;
    let most = 0;
    const work = async (fail: boolean) => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running--;
      if (fail) throw new Error('failed');
      return 'done';
    };
    const runs = Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? a : b).exclusive('password-check:u1', 60_000, () => work(i === 0)));
    const settled = await Promise.allSettled(runs);
    expect(most).toBe(1);
    expect(settled.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    // Nobody holds it afterwards: a third holder takes it at once.
    expect(await new LeasesActor(s).hold('password-check:u1', 1000)).toBe(true);
  });
});
