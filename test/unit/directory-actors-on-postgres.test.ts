import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientsActor } from '../../src/actors/clients.js';
import { OrgsActor } from '../../src/actors/orgs.js';
import { ApiError } from '../../src/model/errors.js';
import { postgresDirectoryStorage } from '../../src/storage/postgres/directory.js';
import { FollowedOnPostgres } from '../../src/threads/followed-on-postgres.js';
import { DIRECTORY_STORES } from '../../src/storage/directory-log.js';
import { directoryNode, migratedDatabase } from '../helpers/postgres.js';
import { person } from '../helpers/people.js';

/**
 * The directory's actors (orgs and users, clients) on two nodes over one PostgreSQL database, as
 * the servers will hold them: each node's copies load from the database, every write is decided
 * there, and each node follows the other's commits through the change feed. The same actors run on
 * LMDB in the rest of the suite.
 */
const pools: pg.Pool[] = [];
let url: string;

async function node() {
  const { directory, reader } = await directoryNode(url, pools, DIRECTORY_STORES);
  const loadedThrough = await directory.last();
  const storage = postgresDirectoryStorage(directory, reader);
  const orgs = new OrgsActor(storage, 'localhost');
  const clients = new ClientsActor(storage);
  // Looks are asked for by the tests (no change feed here: a listening one that never notifies).
  const feed = { connection: () => ({ listening: true, generation: 0 }), version: () => 0, after: () => new Promise<number>(() => undefined) };
  const followed = new FollowedOnPostgres(directory, reader, { orgs, clients, keys: { load: () => undefined }, storage, settings: { storedChanged: () => undefined } }, feed, loadedThrough);
  return { orgs, clients, followed };
}

beforeAll(async () => {
  url = await migratedDatabase('directory_actors');
});

afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end()));
});

describe('orgs and users on two nodes over PostgreSQL', () => {
  it('an org and a person added on A are found on B once it followed; the same user name added on both at once is taken once', async () => {
    const [a, b] = [await node(), await node()];
    await a.orgs.addOrg({ id: 'o1', name: 'One' });
    const ann = await a.orgs.addUser('o1', { id: 'u-ann', ...person('ann') } as never);
    await b.followed.look();
    expect(b.orgs.getUser(ann.id)?.userName).toBe('ann');

    const outcomes = await Promise.allSettled([a.orgs.addUser('o1', person('bea') as never), b.orgs.addUser('o1', person('bea') as never)]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(ApiError);
    expect((refused.reason as ApiError).kind).toBe('AlreadyExists');
    await Promise.all([a.followed.look(), b.followed.look()]);
    const bea = (outcomes.find((o) => o.status === 'fulfilled') as PromiseFulfilledResult<{ id: string }>).value;
    for (const n of [a, b]) {
      expect(n.orgs.getUser(bea.id)?.userName).toBe('bea');
      expect(n.orgs.findUserByLoginName('bea@one.localhost')?.id).toBe(bea.id);
    }
  });

  it('wrong passwords on both nodes at once are counted in the database and lock at exactly the limit', async () => {
    const [a, b] = [await node(), await node()];
    await a.orgs.addOrg({ id: 'o2', name: 'Two' });
    await a.orgs.setPolicy('lockout', 'o2', { maxPasswordAttempts: 5, maxOtpAttempts: 0, showLockoutFailure: true }, true);
    await a.orgs.addUser('o2', { id: 'u-cy', ...person('cy') } as never);
    await b.followed.look();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).orgs.recordPasswordFailure('u-cy')));
    expect(results.filter((r) => r.locked)).toHaveLength(4);
    for (const n of [a, b]) {
      const stored = (await n.orgs.storedUser('u-cy'))!;
      expect(stored.state).toBe('USER_STATE_LOCKED');
      expect(stored.human!.failedPasswordAttempts).toBe(8);
    }
  });

  it('roles added to one project on both nodes at once all land (a write refused as stale is decided again on the row as stored)', async () => {
    const [a, b] = [await node(), await node()];
    await a.orgs.addOrg({ id: 'o3', name: 'Three' });
    const project = await a.orgs.addProject('o3', {
      name: 'Shop',
      projectRoleAssertion: false,
      projectRoleCheck: false,
      hasProjectCheck: false,
      privateLabelingSetting: 'PRIVATE_LABELING_SETTING_UNSPECIFIED',
    });
    await b.followed.look();
    await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).orgs.addProjectRoles(project.id, 'o3', [{ key: `role-${i}`, displayName: `Role ${i}`, group: '' }])));
    await Promise.all([a.followed.look(), b.followed.look()]);
    for (const n of [a, b])
      expect(
        n.orgs
          .getProject(project.id)!
          .roles.map((r) => r.key)
          .sort(),
      ).toEqual(['role-0', 'role-1', 'role-2', 'role-3', 'role-4', 'role-5']);
  });
});
