import { describe, expect, it } from 'vitest';
import { OrgsActor } from '../../src/actors/orgs.js';
import { LeasesActor } from '../../src/actors/leases.js';
import { Table } from '../../src/storage/table.js';
import { QuotaReached, WriteConflict } from '../../src/model/errors.js';
import { ClientsActor } from '../../src/actors/clients.js';
import { SettingsActor } from '../../src/actors/settings.js';
import { MetaStore } from '../../src/storage/meta.js';
import { tempStorageEach } from '../helpers/temp-storage.js';
import { person } from '../helpers/people.js';

/**
 * People are changed as stored (Table.change), so copies of the directory on different threads
 * (here: two OrgsActors over one store, as two HTTP threads hold them) never undo each other's
 * changes, and a lease in the store runs one password check of a person at a time whichever copy
 * asks.
 */
const storage = tempStorageEach('people');

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
      const stored = (await copy.storedUser('u1'))!;
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
    const stored = (await main.storedUser('u1'))!;
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
    expect((await other.storedUser('u1'))!.human!.passwordHash).toBe('admin-hash');
  });

  it('exclusive: two holders (two threads) never run one name at once; the lease is free again after a failure', async () => {
    const s = storage();
    const [a, b] = [new LeasesActor(s.records), new LeasesActor(s.records)];
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
    expect(await new LeasesActor(s.records).hold('password-check:u1', 1000)).toBe(true);
  });
});

describe('the directory decided in the store: unique keys and versions', () => {
  const PROJECT = { name: 'P', projectRoleAssertion: false, projectRoleCheck: false, hasProjectCheck: false, privateLabelingSetting: 'PRIVATE_LABELING_SETTING_UNSPECIFIED' as const };

  it('the same user name added from two copies at once: one is added, the other refused by the store (AlreadyExists)', async () => {
    const { main, other } = await twoCopies(3);
    const results = await Promise.allSettled([main.addUser('o1', person('bob') as never), other.addUser('o1', person('BOB') as never)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(String(refused.reason)).toMatch(/already taken/);
    // Removed, the name is free again for either copy.
    const added = (results.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<{ id: string }>).value;
    const owner = results[0]!.status === 'fulfilled' ? main : other;
    await owner.removeUser(added.id, 'o1');
    const again = owner === main ? other : main;
    again.takeChange('users', added.id);
    await expect(again.addUser('o1', person('bob') as never)).resolves.toMatchObject({ userName: 'bob' });
  });

  it('the same org name and the same resource URI from two copies at once: the store lets one through', async () => {
    const { main, other } = await twoCopies(3);
    const orgs = await Promise.allSettled([main.addOrg({ name: 'Acme' }), other.addOrg({ name: 'acme' })]);
    expect(orgs.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const projects = await Promise.allSettled([
      main.addProject('o1', { ...PROJECT, resourceUris: ['https://api.example/'] }),
      other.addProject('o1', { ...PROJECT, name: 'Q', resourceUris: ['https://api.example/'] }),
    ]);
    expect(projects.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(String((projects.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason)).toMatch(/already registered/);
  });

  it('a change decided on a stale copy is refused by the store, never written over the newer record; the actor decides it again on the record as stored', async () => {
    const { s, main } = await twoCopies(3);
    const project = await main.addProject('o1', PROJECT);
    // A copy loaded now (another thread's), then a rename on main.
    const stale = new OrgsActor(s, 'localhost');
    await main.updateProject(project.id, 'o1', { ...PROJECT, name: 'Renamed' });
    // The store refuses a write made from the version the stale copy holds.
    const staleTable = new Table<{ id: string; sequence: number; name: string }>(s.directoryReader, { store: 'projects', writes: s.directoryWrites, announce: s.directoryChanged });
    const staleRow = { ...staleTable.get(project.id)! };
    await main.addProjectRoles(project.id, 'o1', [{ key: 'r', displayName: 'R', group: '' }]);
    await expect(staleTable.put({ ...staleRow, sequence: staleRow.sequence + 1, name: 'Lost' })).rejects.toThrow(WriteConflict);
    expect(s.stores.projects.get(project.id).name).toBe('Renamed');
    // The actor's update from the stale copy is decided again on the stored record: it lands after the rename and the role.
    const updated = await stale.updateProject(project.id, 'o1', { ...PROJECT, name: 'Other' });
    expect(updated).toMatchObject({ name: 'Other', roles: [{ key: 'r' }] });
    expect(s.stores.projects.get(project.id)).toMatchObject({ name: 'Other', roles: [{ key: 'r' }], sequence: project.sequence + 3 });
  });

  it('a data dir written before the store held unique keys gets them once, from its records', async () => {
    const { s, main } = await twoCopies(3);
    await s.root.transaction(() => {
      for (const { key } of s.root.openDB({ name: 'uniqueKeys', encoding: 'msgpack' }).getRange()) void s.root.openDB({ name: 'uniqueKeys', encoding: 'msgpack' }).remove(key);
    });
    expect(s.uniqueKeys.holder('user-name\no1\nann')).toBeUndefined();
    await s.uniqueKeys.build(main.uniqueKeys());
    expect(s.uniqueKeys.holder('user-name\no1\nann')).toBe('u1');
    expect(s.uniqueKeys.holder('org-name\none')).toBe('o1');
  });
});

describe('registered clients hold places in the store', () => {
  it('registrations from two copies at once fill the quota exactly; a removal frees a place', async () => {
    const s = storage();
    const orgs = new OrgsActor(s, 'localhost');
    await orgs.addOrg({ id: 'o1', name: 'One' });
    const project = await orgs.addProject('o1', {
      name: 'P',
      projectRoleAssertion: false,
      projectRoleCheck: false,
      hasProjectCheck: false,
      privateLabelingSetting: 'PRIVATE_LABELING_SETTING_UNSPECIFIED',
    });
    const copies = [new ClientsActor(s), new ClientsActor(s)];
    const registration = { accessTokenHash: new Uint8Array(32), issuedAt: 0, metadata: {} } as never;
    const oidc = {
      redirectUris: ['https://rp.example/cb'],
      responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
      grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
      appType: 'OIDC_APP_TYPE_WEB',
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
      postLogoutRedirectUris: [],
      additionalOrigins: [],
    } as never;
    const register = (copy: ClientsActor, i: number) => copy.addApp(project, { clientId: `c${i}`, name: `raced ${i}`, oidc, registration }, 5);
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => register(copies[i % 2]!, i)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
    for (const r of results.filter((a) => a.status === 'rejected')) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(QuotaReached);
    const first = (results.find((r) => r.status === 'fulfilled') as PromiseFulfilledResult<{ app: { id: string } }>).value.app;
    const owner = copies.find((c) => c.getApp(first.id))!;
    await owner.removeApp(first.id);
    await expect(register(copies[0]!, 99)).resolves.toMatchObject({ app: { clientId: 'c99' } });
    await expect(register(copies[1]!, 100)).rejects.toBeInstanceOf(QuotaReached);
  });
});

describe('settings decided in the store', () => {
  it('two copies (two threads) changing different fields of one setting at once: both land, neither undoes the other', async () => {
    const s = storage();
    const copies = [0, 1].map(() => new SettingsActor(new MetaStore(s.directoryReader, s.directoryWrites, s.durableDirectory), undefined));
    await Promise.all([copies[0]!.setSecurityPolicy({ enableIframeEmbedding: true, allowedOrigins: ['https://frame.example'] }), copies[1]!.setSecurityPolicy({ enableImpersonation: true })]);
    const stored = s.root.openDB<any, string>({ name: 'meta', encoding: 'msgpack' }).get('securityPolicy');
    expect(stored).toMatchObject({ enableIframeEmbedding: true, allowedOrigins: ['https://frame.example'], enableImpersonation: true, sequence: 2 });
  });
});
