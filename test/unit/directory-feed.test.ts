import { SYSTEM } from '../../src/model/activity.js';
import { describe, expect, it } from 'vitest';
import { OrgsActor } from '../../src/actors/orgs.js';
import { ClientsActor } from '../../src/actors/clients.js';
import { KEY_SET_VERSION, KeysActor } from '../../src/actors/keys.js';
import { WriteBatch } from '../../src/storage/batch.js';
import { Transactions } from '../../src/actors/transaction.js';
import { renewMachineSecret } from '../../src/services/machine-credentials.js';
import type { DirectoryChange } from '../../src/storage/directory-log.js';
import type { Storage } from '../../src/storage/db.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { TestClock } from '../helpers/in-process.js';
import { installClock } from '../../src/util/clock.js';
import { openTempStorage, tempStorageEach } from '../helpers/temp-storage.js';

/**
 * The directory's change feed (DirectoryLog): every write to a directory record names it, in
 * commit order, and a copy of the directory that takes the named records again ends up exactly as
 * a copy loaded whole from the store, lookups included.
 */
const storage = tempStorageEach('feed');

const MACHINE = { name: 'M', description: '', accessTokenType: 'ACCESS_TOKEN_TYPE_BEARER' as const };
const person = (userName: string, email: string) => ({
  person: {
    userName,
    profile: { firstName: 'A', lastName: 'B', nickName: '', preferredLanguage: 'en', gender: 'GENDER_UNSPECIFIED' },
    email: { email, isEmailVerified: true },
    phone: { phone: '+41 79 000 00 00', isPhoneVerified: true },
  },
  credentials: { passwordHash: 'hash' },
});
const PROJECT = { name: 'P', projectRoleAssertion: false, projectRoleCheck: false, hasProjectCheck: false, privateLabelingSetting: 'PRIVATE_LABELING_SETTING_UNSPECIFIED' as const };
const oidc = (redirect: string) =>
  ({
    redirectUris: [redirect],
    responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
    grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
    appType: 'OIDC_APP_TYPE_WEB',
    authMethodType: 'OIDC_AUTH_METHOD_TYPE_BASIC',
    postLogoutRedirectUris: [],
    additionalOrigins: ['https://extra.example'],
  }) as never;

const logged = (s: Storage, after = 0) => s.directoryLog.since(after, 1_000_000)!;

/** Everything a copy answers that a flow reads: its rows and every lookup over them. */
function lookups(
  orgs: OrgsActor,
  clients: ClientsActor,
  probe: { logins: string[]; domains: string[]; resources: string[]; pats: string[]; contacts: string[]; clientIds: string[]; origins: string[]; userIds: string[] },
) {
  return {
    rows: orgs.snapshot(),
    clientRows: clients.snapshot(),
    logins: probe.logins.map((l) => orgs.findUserByLoginName(l)?.id),
    domains: probe.domains.map((d) => orgs.findOrgByDomain(d)?.id),
    resources: probe.resources.map((r) => orgs.projectOfResource(r)?.id),
    pats: probe.pats.map((t) => orgs.authenticatePat(t)?.pat.id),
    contacts: probe.contacts.map((c) => orgs.findUsersByContact(c).map((u) => u.id)),
    clientIds: probe.clientIds.map((c) => clients.appByClient(c)?.id),
    origins: probe.origins.map((o) => clients.originAllowed(o)),
    memberships: probe.userIds.map((u) => orgs.memberships(u).map((m) => m.id)),
    grants: probe.userIds.map((u) => orgs.grantsOf(u).map((g) => g.id)),
    policies: orgs.policy('lockout', 'o1'),
  };
}

describe('the directory change feed', () => {
  it('numbers each write inside its own transaction, in the order the transactions commit: a single write issued after a batch comes after it', async () => {
    const s = storage();
    const orgs = new OrgsActor(s, 'localhost');
    await orgs.addOrg({ id: 'o1', name: 'One' });
    await orgs.addUser('o1', { id: 'u0', userName: 'first', machine: MACHINE });
    const batch = new WriteBatch();
    orgs.stageUser('o1', { id: 'u1', userName: 'batched', machine: MACHINE }, batch);
    const committing = batch.commit(s);
    // Issued after the batch, a single write: a transaction of its own, run after the batch's.
    const single = orgs.setUserMetadata('u0', 'k', new Uint8Array([1]));
    await Promise.all([committing, single]);
    const { changes, last } = logged(s);
    expect(changes).toEqual<DirectoryChange[]>([
      { store: 'orgs', id: 'o1' },
      { store: 'users', id: 'u0' },
      { store: 'users', id: 'u1' },
      { store: 'users', id: 'u0' },
    ]);
    expect(last).toBe(s.directoryLog.last());
    // Read after a point: only what came after it.
    expect(s.directoryLog.since(last - 1, 10)!.changes).toEqual([{ store: 'users', id: 'u0' }]);
    expect(s.directoryLog.since(last, 10)).toEqual({ changes: [], last });
    // More waiting than a copy takes one by one: it loads whole instead.
    expect(s.directoryLog.since(0, 2)).toBeUndefined();
  });

  it('a batch refused at its transaction writes no entry; the log goes on', async () => {
    const s = storage();
    const orgs = new OrgsActor(s, 'localhost');
    await orgs.addOrg({ id: 'o1', name: 'One' });
    const before = s.directoryLog.last();
    const batch = new WriteBatch();
    orgs.stagePolicy('lockout', 'o1', { maxPasswordAttempts: 1, maxOtpAttempts: 0, showLockoutFailure: true }, batch);
    const committing = batch.commit(s);
    // The staged row is written before the batch's transaction runs: the batch is refused whole.
    const direct = orgs.setPolicy('lockout', 'o1', { maxPasswordAttempts: 2, maxOtpAttempts: 0, showLockoutFailure: true }, true);
    await expect(committing).rejects.toThrow('changed while it was staged');
    await direct;
    const { changes, last } = s.directoryLog.since(before, 10)!;
    expect(changes).toEqual([{ store: 'policies', id: 'lockout:o1' }]);
    // The refused batch took no number.
    expect(last).toBe(before + 1);
    await orgs.addUser('o1', { id: 'u3', userName: 'c', machine: MACHINE });
    expect(s.directoryLog.since(before, 10)!.changes.map((c) => c.id)).toEqual(['lockout:o1', 'u3']);
  });

  it('pruned entries are gone for a copy that had not taken them (it loads whole); numbering goes on after a restart', async () => {
    const clock = new TestClock();
    const uninstall = installClock(clock);
    const temp = openTempStorage('feed-prune');
    try {
      const orgs = new OrgsActor(temp.storage, 'localhost');
      await orgs.addOrg({ id: 'o1', name: 'One' });
      await orgs.addUser('o1', { id: 'u1', userName: 'a', machine: MACHINE });
      clock.advance(60_000);
      await orgs.addUser('o1', { id: 'u2', userName: 'b', machine: MACHINE });
      const last = temp.storage.directoryLog.last();
      expect(await temp.storage.directoryLog.prune(clock.now() - 30_000)).toBe(2);
      // A copy that had taken nothing: too far behind. One that had taken the first two: goes on.
      expect(temp.storage.directoryLog.since(0, 10)).toBeUndefined();
      expect(temp.storage.directoryLog.since(last - 1, 10)!.changes).toEqual([{ store: 'users', id: 'u2' }]);
      // Everything pruned, then a restart: numbers never go back.
      clock.advance(60_000);
      expect(await temp.storage.directoryLog.prune(clock.now())).toBe(1);
      expect(temp.storage.directoryLog.last()).toBe(last);
      const reopened = await temp.reopen();
      expect(reopened.directoryLog.last()).toBe(last);
      const again = new OrgsActor(reopened, 'localhost');
      await again.addUser('o1', { id: 'u3', userName: 'c', machine: MACHINE });
      expect(reopened.directoryLog.since(last, 10)).toEqual({ changes: [{ store: 'users', id: 'u3' }], last: last + 1 });
    } finally {
      uninstall();
      await temp.close();
    }
  });

  it('a copy that takes the logged changes answers exactly as one loaded whole: rows, names, domains, tokens, memberships, grants, origins', async () => {
    const s = storage();
    const writer = new OrgsActor(s, 'localhost');
    const writerClients = new ClientsActor(s);
    await writer.addOrg({ id: 'o1', name: 'One' });
    // The copy is loaded now, with the first org; what follows reaches it through the feed only.
    const copy = new OrgsActor(s, 'localhost');
    const copyClients = new ClientsActor(s);
    let through = s.directoryLog.last();
    const takeAll = () => {
      const { changes, last } = logged(s, through);
      for (const { store, id } of changes) expect(copy.takeChange(store, id) || copyClients.takeChange(store, id), `${store} ${id}`).toBe(true);
      through = last;
    };

    await writer.addOrg({ id: 'o2', name: 'Two' });
    const batch = new WriteBatch();
    writer.stageOrgDomain('o1', { domainName: 'one.example', isVerified: true, isPrimary: false }, batch);
    await batch.commit(s);
    const project = await writer.addProject('o1', { id: 'p1', ...PROJECT, resourceUris: ['https://api.example/'] });
    await writer.updateProject('p1', 'o1', { ...PROJECT, resourceUris: ['https://api2.example/'] });
    await writer.addUser('o1', { id: 'h1', ...person('alice', 'alice@mail.example') });
    await writer.addUser('o1', { id: 'h2', ...person('bob', 'bob@mail.example') });
    await writer.addUser('o2', { id: 'm1', userName: 'robot', machine: MACHINE });
    await writer.lockUser('h2', 'o1');
    await writer.recordPasswordFailure('h1');
    await writer.setUserMetadata('h1', 'k', new Uint8Array([7]));
    await writer.addMember('org:o1', 'h1', ['ORG_OWNER']);
    await writer.addMember('project:p1', 'h2', ['PROJECT_OWNER']);
    const grant = await writer.addUserGrant({ userId: 'h1', orgId: 'o1', projectId: 'p1', projectGrantId: '', roleKeys: [] });
    await writer.addUserGrant({ userId: 'h2', orgId: 'o1', projectId: 'p1', projectGrantId: '', roleKeys: [] });
    const kept = await writer.addPat('m1');
    const dropped = await writer.addPat('m1');
    await writer.setPolicy('lockout', 'o1', { maxPasswordAttempts: 3, maxOtpAttempts: 0, showLockoutFailure: true }, true);
    const app = await writerClients.addApp(project, { id: 'a1', clientId: 'client-1', name: 'App', oidc: oidc('https://app.example/cb') });
    await writerClients.addApp(project, { id: 'a2', clientId: 'client-2', name: 'Gone', oidc: oidc('https://gone.example/cb') });
    await writerClients.updateOidcConfig('a1', oidc('https://moved.example/cb'), false);
    await writerClients.addAppKey(app.app, {});
    await renewMachineSecret({ orgs: writer, clients: writerClients, transactions: new Transactions(s) }, 'm1', SYSTEM);
    await writerClients.addMachineKey({ id: 'm1', orgId: 'o2' }, {});
    // The copy has seen none of it yet.
    expect(copy.getUser('h1')).toBeUndefined();
    takeAll();

    // A second round: a person removed (memberships and grants go with them), a token, an app.
    await writer.removeUser('h2', 'o1');
    await writer.removePolicy('lockout', 'o1');
    await writer.removePat(dropped.pat.id);
    await writerClients.removeApp('a2');
    takeAll();

    const probe = {
      logins: ['alice@one.localhost', 'alice@one.example', 'alice', 'bob', 'robot@two.localhost', 'nobody'],
      domains: ['one.localhost', 'one.example', 'two.localhost', 'none.example'],
      resources: ['https://api.example/', 'https://api2.example/'],
      pats: [kept.token, dropped.token],
      contacts: ['alice@mail.example', 'bob@mail.example'],
      clientIds: ['client-1', 'client-2'],
      origins: ['https://app.example', 'https://moved.example', 'https://gone.example', 'https://extra.example'],
      userIds: ['h1', 'h2', 'm1'],
    };
    const whole = lookups(new OrgsActor(s, 'localhost'), new ClientsActor(s), probe);
    expect(lookups(copy, copyClients, probe)).toEqual(whole);
    // The probes found something: the comparison is not of empty answers.
    expect(whole.logins).toEqual(['h1', 'h1', 'h1', undefined, 'm1', undefined]);
    expect(whole.domains).toEqual(['o1', 'o1', 'o2', undefined]);
    expect(whole.resources).toEqual([undefined, 'p1']);
    expect(whole.pats).toEqual([kept.pat.id, undefined]);
    expect(whole.clientIds).toEqual(['a1', undefined]);
    expect(whole.origins).toEqual([false, true, false, true]);
    expect(whole.memberships).toEqual([['org:o1|h1'], [], []]);
    expect(whole.grants).toEqual([[grant.id], [], []]);
    expect(copy.getUser('h1')?.human?.failedPasswordAttempts).toBe(1);
    expect(copyClients.appKeysOf('a1')).toHaveLength(1);
    expect(copyClients.hasMachineSecret('m1')).toBe(true);
    // A store the actors do not hold is not taken (the copy then loads whole).
    expect(copy.takeChange('signingKeys', 'x') || copyClients.takeChange('meta', 'x')).toBe(false);
  });

  it("a new signing key set is one commit: its keys and the set's version, logged row by row", async () => {
    const s = storage();
    const keys = new KeysActor(s.directoryReader, s.directoryWrites, MasterKey.fromSecret('feed test master key secret, long enough'), 'ES256', 3_600_000, 60_000, s.durableDirectory);
    const before = s.directoryLog.last();
    await keys.start();
    const kids = () => [...s.stores.signingKeys.getKeys()] as string[];
    const afterStart = kids();
    await keys.rotate();
    keys.stop();
    const changes = s.directoryLog.since(before, 20)!.changes;
    // Two commits, each its keys (the first set: active and next; the rotated one: those two and a
    // new next), closed by the set's version.
    const commits: string[][] = [[]];
    for (const change of changes) {
      if (change.store === 'meta') {
        expect(change.id).toBe(KEY_SET_VERSION);
        commits.push([]);
      } else {
        expect(change.store).toBe('signingKeys');
        commits.at(-1)!.push(change.id);
      }
    }
    expect(commits.map((ids) => ids.sort())).toEqual([afterStart.sort(), kids().sort(), []]);
  });

  it('settings are logged as meta changes', async () => {
    const s = storage();
    const before = s.directoryLog.last();
    await s.meta.setFeatures({ oidcTokenExchange: true });
    expect(s.directoryLog.since(before, 10)!.changes).toEqual([{ store: 'meta', id: 'features' }]);
  });
});
