import { describe, expect, it } from 'vitest';
import { OrgsActor } from '../../src/actors/orgs.js';
import { ClientsActor } from '../../src/actors/clients.js';
import { FollowedWrites } from '../../src/threads/followed-writes.js';
import { TestClock } from '../helpers/in-process.js';
import { installClock } from '../../src/util/clock.js';
import { openTempStorage } from '../helpers/temp-storage.js';

/**
 * The main thread's copy of the directory follows what the other threads write (FollowedWrites):
 * record by record from the change feed, and, when the feed no longer reaches back that far (pruned
 * while nothing was served), every record read again, since that copy is never loaded anew.
 */
const MACHINE = { name: 'M', description: '', accessTokenType: 'ACCESS_TOKEN_TYPE_BEARER' as const };

describe('FollowedWrites', () => {
  it("takes another copy's writes from the feed, and everything again once the feed was pruned past it", async () => {
    const clock = new TestClock();
    const uninstall = installClock(clock);
    const temp = openTempStorage('followed');
    try {
      const s = temp.storage;
      const main = new OrgsActor(s, 'localhost');
      await main.addOrg({ id: 'o1', name: 'One' });
      const copy = { orgs: main, clients: new ClientsActor(s), keys: { load: () => {} }, storage: s, settings: { storedChanged: () => {} } };
      const followed = new FollowedWrites(s, copy);
      // Another thread's copy writes.
      const other = new OrgsActor(s, 'localhost');
      await other.addUser('o1', { id: 'u1', userName: 'a', machine: MACHINE });
      expect(main.getUser('u1')).toBeUndefined();
      s.freshReads();
      followed.catchUp();
      expect(main.findUserByLoginName('a@one.localhost')?.id).toBe('u1');

      // Nothing served for longer than the feed keeps its entries: the other copy's next writes are pruned away.
      await other.lockUser('u1', 'o1');
      await other.addUser('o1', { id: 'u2', userName: 'b', machine: MACHINE });
      clock.advance(60_000);
      await s.directoryLog.prune(clock.now());
      s.freshReads();
      followed.catchUp();
      expect(main.getUser('u1')?.state).toBe('USER_STATE_LOCKED');
      expect(main.findUserByLoginName('b@one.localhost')?.id).toBe('u2');
      // A removal while behind is taken too: the name is free in the copy's lookups.
      await other.removeUser('u2', 'o1');
      clock.advance(60_000);
      await s.directoryLog.prune(clock.now());
      s.freshReads();
      followed.catchUp();
      expect(main.getUser('u2')).toBeUndefined();
      expect(main.findUserByLoginName('b@one.localhost')).toBeUndefined();
    } finally {
      uninstall();
      await temp.close();
    }
  });
});
