import { instanceLifetimeLimits } from '../../src/zitadel/oidc-config.js';
import { loadConfig } from '../../src/config.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WriteBatch } from '../../src/storage/batch.js';
import { WriteConflict } from '../../src/model/errors.js';
import type { Storage } from '../../src/storage/db.js';
import type { DirectoryWrites } from '../../src/storage/directory-writes.js';
import { openTempStorage, type TempStorage } from '../helpers/temp-storage.js';

/** The instance's token lifetimes an import checks apps' own against: the settings' defaults. */
const LIMITS = instanceLifetimeLimits(loadConfig({}, []));
import { Table } from '../../src/storage/table.js';

/**
 * Atomic import commits: staged rows are seen through their batch only, written together and then
 * visible to all, or dropped; a table's writes are visible at once and taken back if they fail.
 */
let temp: TempStorage;
let storage: Storage;

beforeEach(() => {
  temp = openTempStorage('batch');
  storage = temp.storage;
});

afterEach(async () => {
  await temp.close();
});

describe('WriteBatch', () => {
  it('commits rows of several stores in one transaction', async () => {
    const orgs = Table.ofDirectory<{ id: string; name: string }>(storage, 'orgs');
    const users = Table.ofDirectory<{ id: string; orgId: string }>(storage, 'users');
    const batch = new WriteBatch();
    orgs.stage({ id: 'o1', name: 'one' }, batch);
    users.stage({ id: 'u1', orgId: 'o1' }, batch);
    orgs.stage({ id: 'o1', name: 'renamed' }, batch);
    expect(orgs.get('o1', batch)?.name).toBe('renamed');
    expect(orgs.get('o1')).toBeUndefined();
    expect(storage.stores.orgs.get('o1')).toBeUndefined();
    expect(batch.size).toBe(3);
    await batch.commit(storage);
    expect(orgs.get('o1')?.name).toBe('renamed');
    expect(users.get('u1')).toEqual({ id: 'u1', orgId: 'o1' });
    expect(storage.stores.orgs.get('o1')).toEqual({ id: 'o1', name: 'renamed' });
    expect(storage.stores.users.get('u1')).toEqual({ id: 'u1', orgId: 'o1' });
    expect(batch.size).toBe(0);
  });

  it('rollback restores memory (also rows staged twice and side indexes)', async () => {
    const orgs = Table.ofDirectory<{ id: string; name: string }>(storage, 'orgs');
    await orgs.put({ id: 'o1', name: 'before' });
    const index = new Map<string, string>();
    const batch = new WriteBatch();
    orgs.stage({ id: 'o1', name: 'first' }, batch);
    orgs.stage({ id: 'o1', name: 'second' }, batch);
    orgs.stage({ id: 'o2', name: 'new' }, batch);
    index.set('new', 'o2');
    batch.onRollback(() => index.delete('new'));
    batch.rollback();
    expect(orgs.get('o1')).toEqual({ id: 'o1', name: 'before' });
    expect(orgs.get('o2')).toBeUndefined();
    expect(index.size).toBe(0);
    await batch.commit(storage);
    expect(storage.stores.orgs.get('o2')).toBeUndefined();
  });

  it('rolls memory back when the transaction fails, and writes nothing', async () => {
    const orgs = Table.ofDirectory<{ id: string; name: string }>(storage, 'orgs');
    const batch = new WriteBatch();
    orgs.stage({ id: 'o3', name: 'doomed' }, batch);
    const failing = { directoryWrites: { commit: () => Promise.reject(new Error('disk full')) }, durableDirectory: <T>(p: Promise<T>) => p } as unknown as Storage;
    await expect(batch.commit(failing)).rejects.toThrow('disk full');
    expect(orgs.get('o3')).toBeUndefined();
    expect(storage.stores.orgs.get('o3')).toBeUndefined();
  });
});

describe('staged rows', () => {
  it('are invisible to other readers until the commit, and visible through their batch', async () => {
    const orgs = Table.ofDirectory<{ id: string; name: string }>(storage, 'orgs');
    await orgs.put({ id: 'o1', name: 'before' });
    const batch = new WriteBatch();
    orgs.stage({ id: 'o1', name: 'staged' }, batch);
    orgs.stage({ id: 'o2', name: 'new' }, batch);
    expect(orgs.get('o1')?.name).toBe('before');
    expect(orgs.get('o2')).toBeUndefined();
    expect(orgs.has('o2')).toBe(false);
    expect([...orgs.values()].map((o) => o.name)).toEqual(['before']);
    expect(orgs.get('o2', batch)?.name).toBe('new');
    expect([...orgs.valuesIn(batch)].map((o) => o.name).sort()).toEqual(['new', 'staged']);
    // The ids are taken (a second batch or a put cannot claim them as new ones).
    expect(orgs.taken('o2')).toBe(true);
    const committing = batch.commit(storage);
    expect(orgs.get('o2')).toBeUndefined();
    await committing;
    expect(orgs.get('o1')?.name).toBe('staged');
    expect(orgs.get('o2')?.name).toBe('new');
    expect(orgs.taken('o2')).toBe(true);
  });

  it('a rollback releases the claimed ids and never touches rows written meanwhile', async () => {
    const orgs = Table.ofDirectory<{ id: string; name: string }>(storage, 'orgs');
    const batch = new WriteBatch();
    orgs.stage({ id: 'o1', name: 'staged' }, batch);
    expect(orgs.taken('o1')).toBe(true);
    await orgs.put({ id: 'o1', name: 'concurrent' });
    batch.rollback();
    expect(orgs.get('o1')?.name).toBe('concurrent');
    expect(storage.stores.orgs.get('o1')).toEqual({ id: 'o1', name: 'concurrent' });
    const other = new WriteBatch();
    orgs.stage({ id: 'o9', name: 'x' }, other);
    other.rollback();
    expect(orgs.taken('o9')).toBe(false);
  });

  it('a failed commit leaves a row written meanwhile as it is', async () => {
    const orgs = Table.ofDirectory<{ id: string; name: string }>(storage, 'orgs');
    await orgs.put({ id: 'o1', name: 'before' });
    const batch = new WriteBatch();
    orgs.stage({ id: 'o1', name: 'staged' }, batch);
    let release!: () => void;
    const failing = {
      directoryWrites: { commit: () => new Promise((_, reject) => (release = () => reject(new Error('disk full')))) },
      durableDirectory: <T>(p: Promise<T>) => p,
    } as unknown as Storage;
    const committing = batch.commit(failing);
    const written = orgs.put({ id: 'o1', name: 'concurrent' });
    release();
    await expect(committing).rejects.toThrow('disk full');
    await written;
    expect(orgs.get('o1')?.name).toBe('concurrent');
  });

  it('a commit never overwrites a row written after commit() was called (memory and disk agree)', async () => {
    const orgs = Table.ofDirectory<{ id: string; name: string }>(storage, 'orgs');
    const batch = new WriteBatch();
    orgs.stage({ id: 'o1', name: 'staged' }, batch);
    orgs.stage({ id: 'o2', name: 'other' }, batch);
    const committing = batch.commit(storage);
    const written = orgs.put({ id: 'o1', name: 'newer' });
    // lmdb runs the batch's transaction after the put: the batch sees the change there and aborts whole.
    await expect(committing).rejects.toThrow('changed while it was staged');
    await written;
    expect(orgs.get('o1')?.name).toBe('newer');
    expect(storage.stores.orgs.get('o1')).toEqual({ id: 'o1', name: 'newer' });
    expect(storage.stores.orgs.get('o2')).toBeUndefined();
    expect(orgs.get('o2')).toBeUndefined();
    expect(orgs.taken('o2')).toBe(false);
  });

  it('a row changed by another writer since it was staged fails the commit (no lost update)', async () => {
    const orgs = Table.ofDirectory<{ id: string; name: string }>(storage, 'orgs');
    await orgs.put({ id: 'o1', name: 'before' });
    const batch = new WriteBatch();
    orgs.stage({ id: 'o1', name: 'staged from before' }, batch);
    await orgs.put({ id: 'o1', name: 'changed' });
    await expect(batch.commit(storage)).rejects.toThrow('changed while it was staged');
    expect(orgs.get('o1')?.name).toBe('changed');
    expect(storage.stores.orgs.get('o1')).toEqual({ id: 'o1', name: 'changed' });
    expect(batch.size).toBe(0);
  });

  it('a staged removal hides the row through its batch only, and removes it for all at the commit', async () => {
    const orgs = Table.ofDirectory<{ id: string; name: string }>(storage, 'orgs');
    await orgs.put({ id: 'o1', name: 'one' });
    await orgs.put({ id: 'o2', name: 'two' });
    const batch = new WriteBatch();
    orgs.stageRemoval('o1', batch);
    expect(orgs.get('o1', batch)).toBeUndefined();
    expect([...orgs.valuesIn(batch)].map((o) => o.id)).toEqual(['o2']);
    expect(orgs.get('o1')?.name).toBe('one');
    expect(storage.stores.orgs.get('o1')).toEqual({ id: 'o1', name: 'one' });
    await batch.commit(storage);
    expect(orgs.get('o1')).toBeUndefined();
    expect(orgs.has('o1')).toBe(false);
    expect(storage.stores.orgs.get('o1')).toBeUndefined();
    expect(orgs.get('o2')?.name).toBe('two');
  });

  it('a staged removal rolled back, or refused because the row changed meanwhile, leaves the row', async () => {
    const orgs = Table.ofDirectory<{ id: string; name: string }>(storage, 'orgs');
    await orgs.put({ id: 'o1', name: 'one' });
    const dropped = new WriteBatch();
    orgs.stageRemoval('o1', dropped);
    dropped.rollback();
    await dropped.commit(storage);
    expect(orgs.get('o1')?.name).toBe('one');

    const late = new WriteBatch();
    orgs.stageRemoval('o1', late);
    await orgs.put({ id: 'o1', name: 'changed' });
    await expect(late.commit(storage)).rejects.toBeInstanceOf(WriteConflict);
    expect(orgs.get('o1')?.name).toBe('changed');
    expect(storage.stores.orgs.get('o1')).toEqual({ id: 'o1', name: 'changed' });
  });

  it('onCommit bookkeeping runs after the rows are visible; not on rollback', async () => {
    const orgs = Table.ofDirectory<{ id: string; name: string }>(storage, 'orgs');
    const seen: (string | undefined)[] = [];
    const batch = new WriteBatch();
    orgs.stage({ id: 'o1', name: 'one' }, batch);
    batch.onCommit(() => seen.push(orgs.get('o1')?.name));
    await batch.commit(storage);
    const dropped = new WriteBatch();
    orgs.stage({ id: 'o2', name: 'two' }, dropped);
    dropped.onCommit(() => seen.push('never'));
    dropped.rollback();
    await dropped.commit(storage);
    expect(seen).toEqual(['one']);
  });
});

describe('Table writes', () => {
  type Row = { id: string; name: string };
  /** The orgs table over these commits (a store whose commits fail, or one that lets some through). */
  const tableWith = (commit: DirectoryWrites['commit']) =>
    new Table<Row>(storage.directoryReader, { store: 'orgs', writes: Object.assign(Object.create(storage.directoryWrites) as DirectoryWrites, { commit }), announce: storage.directoryChanged });
  const realCommit: DirectoryWrites['commit'] = (commit) => storage.directoryWrites.commit(commit);

  it('a failed put is taken back from memory', async () => {
    const orgs = Table.ofDirectory<Row>(storage, 'orgs');
    await orgs.put({ id: 'o1', name: 'before' });
    let reject!: (e: Error) => void;
    const fail = new Promise<never>((_, r) => (reject = r));
    const broken = tableWith(() => fail);
    const write = broken.put({ id: 'o1', name: 'doomed' });
    expect(broken.get('o1')?.name).toBe('doomed');
    reject(new Error('disk full'));
    await expect(write).rejects.toThrow('disk full');
    expect(broken.get('o1')?.name).toBe('before');
    const added = broken.put({ id: 'o2', name: 'new' });
    await expect(added).rejects.toThrow('disk full');
    expect(broken.has('o2')).toBe(false);
  });

  it('a put made on top of a write that then fails is refused too (the store never held what it was made from); memory follows the store', async () => {
    const orgs0 = Table.ofDirectory<Row & { sequence: number }>(storage, 'orgs');
    // Rows carry their version (`sequence`), as the directory's do.
    await orgs0.put({ id: 'o1', name: 'durable', sequence: 1 });
    let reject!: (e: Error) => void;
    const fail = new Promise<never>((_, r) => (reject = r));
    let calls = 0;
    const orgs = tableWith((commit) => (++calls === 1 ? fail : realCommit(commit)));
    const first = orgs.put({ id: 'o1', name: 'first', sequence: 2 } as Row);
    const second = orgs.put({ id: 'o1', name: 'second', sequence: 3 } as Row);
    reject(new Error('disk full'));
    await expect(first).rejects.toThrow('disk full');
    await expect(second).rejects.toBeInstanceOf(WriteConflict);
    expect(orgs.get('o1')?.name).toBe('durable');
    // Made from the row as stored, a write lands.
    await orgs.put({ id: 'o1', name: 'third', sequence: 2 } as Row);
    expect(orgs.get('o1')?.name).toBe('third');
  });

  it('two failed writes in a row go back to the last one that was written', async () => {
    const orgs = Table.ofDirectory<Row>(storage, 'orgs');
    await orgs.put({ id: 'o1', name: 'durable' });
    const rejects: ((e: Error) => void)[] = [];
    const broken = tableWith(() => new Promise<never>((_, r) => rejects.push(r)));
    const first = broken.put({ id: 'o1', name: 'first' });
    const second = broken.put({ id: 'o1', name: 'second' });
    for (const reject of rejects) reject(new Error('disk full'));
    await expect(first).rejects.toThrow('disk full');
    await expect(second).rejects.toThrow('disk full');
    expect(broken.get('o1')?.name).toBe('durable');
  });

  it('a failed remove brings the row back', async () => {
    const orgs = Table.ofDirectory<Row>(storage, 'orgs');
    await orgs.put({ id: 'o1', name: 'kept' });
    const broken = tableWith(() => Promise.reject(new Error('disk full')));
    await expect(broken.remove('o1')).rejects.toThrow('disk full');
    expect(broken.get('o1')?.name).toBe('kept');
  });

  it('hands out read-only views (a type error to change them)', async () => {
    const orgs = Table.ofDirectory<{ id: string; tags: string[] }>(storage, 'orgs');
    await orgs.put({ id: 'o1', tags: ['a'] });
    const row = orgs.get('o1')!;
    // @ts-expect-error read-only view
    row.id = 'x';
    // @ts-expect-error read-only view (deep)
    row.tags.push('b');
    expect(row).toBeDefined();
  });
});

describe('actors staging into a batch', () => {
  it('a staged org, user and app are seen through the batch only; ids and names are taken meanwhile', async () => {
    const { OrgsActor } = await import('../../src/actors/orgs.js');
    const { ClientsActor } = await import('../../src/actors/clients.js');
    const orgs = new OrgsActor(storage, 'localhost');
    const clients = new ClientsActor(storage);
    const batch = new WriteBatch();
    orgs.stageOrg({ id: 'o1', name: 'One' }, batch);
    const user = orgs.stageUser('o1', { id: 'u1', userName: 'alice', machine: { name: 'A', description: '', accessTokenType: 'ACCESS_TOKEN_TYPE_BEARER' } }, batch);
    const project = orgs.stageProject(
      'o1',
      { id: 'p1', name: 'P', projectRoleAssertion: false, projectRoleCheck: false, hasProjectCheck: false, privateLabelingSetting: 'PRIVATE_LABELING_SETTING_UNSPECIFIED' },
      batch,
    );
    orgs.stageUserMetadata('u1', 'o1', 'k', new Uint8Array([1]), batch);
    const oidc = {
      redirectUris: ['https://app.example/cb'],
      responseTypes: ['OIDC_RESPONSE_TYPE_CODE'],
      grantTypes: ['OIDC_GRANT_TYPE_AUTHORIZATION_CODE'],
      appType: 'OIDC_APP_TYPE_WEB',
      authMethodType: 'OIDC_AUTH_METHOD_TYPE_NONE',
      postLogoutRedirectUris: [],
      additionalOrigins: [],
    };
    clients.stageApp(project, { id: 'a1', clientId: 'c1', name: 'App', oidc: oidc as never }, batch);

    expect(orgs.getOrg('o1')).toBeUndefined();
    expect(orgs.getUser('u1')).toBeUndefined();
    expect(orgs.findUserByLoginName('alice@one.localhost')).toBeUndefined();
    expect(orgs.findUserByLoginName('alice')).toBeUndefined();
    expect(orgs.requireUser('u1', 'o1', batch).metadata?.k).toEqual(new Uint8Array([1]));
    expect(clients.getApp('a1')).toBeUndefined();
    expect(clients.appByClient('c1')).toBeUndefined();
    expect(clients.originAllowed('https://app.example')).toBe(false);
    await expect(orgs.addOrg({ id: 'o1', name: 'Other' })).rejects.toThrow('already exists');
    expect(() => orgs.stageUser('o1', { userName: 'Alice', machine: { name: 'B', description: '', accessTokenType: 'ACCESS_TOKEN_TYPE_BEARER' } }, batch)).toThrow('already taken');
    expect(user.id).toBe('u1');

    await batch.commit(storage);
    expect(orgs.getUser('u1')?.metadata?.k).toEqual(new Uint8Array([1]));
    expect(orgs.findUserByLoginName('alice@one.localhost')?.id).toBe('u1');
    expect(orgs.findUserByLoginName('alice')?.id).toBe('u1');
    expect(clients.appByClient('c1')?.id).toBe('a1');
    expect(clients.originAllowed('https://app.example')).toBe(true);
  });

  it('a domain staged for an existing org finds it only once committed', async () => {
    const { OrgsActor } = await import('../../src/actors/orgs.js');
    const orgs = new OrgsActor(storage, 'localhost');
    await orgs.addOrg({ id: 'o1', name: 'One' });
    await orgs.addUser('o1', { id: 'u1', userName: 'alice', machine: { name: 'A', description: '', accessTokenType: 'ACCESS_TOKEN_TYPE_BEARER' } });
    const batch = new WriteBatch();
    expect(orgs.stageOrgDomain('o1', { domainName: 'one.example', isVerified: true, isPrimary: false }, batch)).toBe(true);
    expect(orgs.findOrgByDomain('one.example')).toBeUndefined();
    expect(orgs.findUserByLoginName('alice@one.example')).toBeUndefined();
    expect(orgs.getOrg('o1')?.domains).toHaveLength(1);
    // Taken meanwhile: another org cannot claim it.
    await orgs.addOrg({ id: 'o2', name: 'Two' });
    expect(() => orgs.stageOrgDomain('o2', { domainName: 'one.example', isVerified: true, isPrimary: false }, new WriteBatch())).toThrow('already used');
    await batch.commit(storage);
    expect(orgs.findOrgByDomain('one.example')?.id).toBe('o1');
    expect(orgs.findUserByLoginName('alice@one.example')?.id).toBe('u1');
    expect(orgs.getOrg('o1')?.domains).toHaveLength(2);
  });

  it('a rolled-back batch leaves no claims behind', async () => {
    const { OrgsActor } = await import('../../src/actors/orgs.js');
    const orgs = new OrgsActor(storage, 'localhost');
    const batch = new WriteBatch();
    orgs.stageOrg({ id: 'o1', name: 'One' }, batch);
    batch.rollback();
    const org = await orgs.addOrg({ id: 'o1', name: 'One' });
    expect(orgs.primaryDomain(org)).toBe('one.localhost');
  });

  it('an org name, and a user grant on a project, are taken while their first write commits', async () => {
    const { OrgsActor } = await import('../../src/actors/orgs.js');
    const orgs = new OrgsActor(storage, 'localhost');
    // Both calls start before the first commits: the second must see the name taken.
    const first = orgs.addOrg({ id: 'o1', name: 'Same' });
    await expect(orgs.addOrg({ id: 'o2', name: 'same' })).rejects.toThrow('already exists');
    await first;
    await expect(orgs.addOrg({ id: 'o3', name: 'SAME' })).rejects.toThrow('already exists');

    await orgs.addUser('o1', { id: 'u1', userName: 'alice', machine: { name: 'A', description: '', accessTokenType: 'ACCESS_TOKEN_TYPE_BEARER' } });
    await orgs.addProject('o1', { id: 'p1', name: 'P', projectRoleAssertion: false, projectRoleCheck: false, hasProjectCheck: false, privateLabelingSetting: 'PRIVATE_LABELING_SETTING_UNSPECIFIED' });
    const grant = { userId: 'u1', orgId: 'o1', projectId: 'p1', projectGrantId: '', roleKeys: [] };
    const granted = orgs.addUserGrant(grant);
    await expect(orgs.addUserGrant(grant)).rejects.toThrow('already has a grant');
    await granted;
    expect(orgs.grantsOf('u1')).toHaveLength(1);
    await expect(orgs.addUserGrant(grant)).rejects.toThrow('already has a grant');
  });
});

describe('import atomicity', () => {
  it('an org whose commit fails leaves nothing behind; the other orgs import', async () => {
    const { OrgsActor } = await import('../../src/actors/orgs.js');
    const { ClientsActor } = await import('../../src/actors/clients.js');
    const { MasterKey } = await import('../../src/crypto/master-key.js');
    const { Importer } = await import('../../src/services/migration/importer.js');
    const { Deadline } = await import('../../src/services/migration/deadline.js');
    const { bundleOrgs, scanDocument } = await import('../../src/services/migration/source.js');
    const orgs = new OrgsActor(storage, 'localhost');
    const clients = new ClientsActor(storage);
    const user = (id: string) => ({ userId: id, user: { userName: id, profile: { firstName: 'A', lastName: 'B' }, email: { email: 'a@b.example' } } });
    const bundle = {
      orgs: [
        { orgId: 'good', org: { name: 'Good' }, humanUsers: [user('g1')], projects: [{ projectId: 'gp', project: { name: 'P' } }] },
        { orgId: 'bad', org: { name: 'Bad' }, humanUsers: [user('b1'), user('b2')], projects: [{ projectId: 'bp', project: { name: 'P' } }] },
      ],
    };
    const { scanner, root } = scanDocument(Buffer.from(JSON.stringify(bundle)), 'bundle');
    let commits = 0;
    const importer = new Importer(
      {
        lifetimeLimits: LIMITS,
        managementProjectId: 'management',
        orgs,
        clients,
        masterKey: MasterKey.fromSecret('test'),
        begin: () => new WriteBatch(),
        hashPassword: async () => 'unused',
        commit: (batch) => {
          commits++;
          // The second org's phase-1 commit fails.
          if (commits === 2) return batch.commit({ directoryWrites: { commit: () => Promise.reject(new Error('disk full')) }, durableDirectory: (p: Promise<unknown>) => p } as unknown as Storage);
          return batch.commit(storage);
        },
      },
      new Deadline(60_000, 'import'),
    );
    const report = await importer.run(bundleOrgs(scanner, root, 'dataOrgs', false));
    expect(report.errors).toEqual([{ type: 'org', id: 'bad', message: 'ID=IMPORT-C0mm1 Message=writing the organization failed, none of it was imported: disk full' }]);
    expect(report.orgs.map((o) => o.orgId)).toEqual(['good']);
    for (const id of ['good', 'g1', 'gp']) expect(orgs.getOrg(id) ?? orgs.getUser(id) ?? orgs.getProject(id), id).toBeDefined();
    expect(storage.stores.users.get('g1')).toBeDefined();
    for (const id of ['bad', 'b1', 'b2', 'bp']) {
      expect(orgs.getOrg(id) ?? orgs.getUser(id) ?? orgs.getProject(id), id).toBeUndefined();
      expect(storage.stores.orgs.get(id) ?? storage.stores.users.get(id) ?? storage.stores.projects.get(id)).toBeUndefined();
    }
    expect(orgs.findUserByLoginName('b1@bad.localhost')).toBeUndefined();
    expect(orgs.findOrgByDomain('bad.localhost')).toBeUndefined();
  });

  it('tells its progress at each org and phase, counting what was committed only', async () => {
    const { OrgsActor } = await import('../../src/actors/orgs.js');
    const { ClientsActor } = await import('../../src/actors/clients.js');
    const { MasterKey } = await import('../../src/crypto/master-key.js');
    const { Importer } = await import('../../src/services/migration/importer.js');
    const { Deadline } = await import('../../src/services/migration/deadline.js');
    const { bundleOrgs, scanDocument } = await import('../../src/services/migration/source.js');
    const orgs = new OrgsActor(storage, 'localhost');
    const clients = new ClientsActor(storage);
    const user = (id: string) => ({ userId: id, user: { userName: id, profile: { firstName: 'A', lastName: 'B' }, email: { email: 'a@b.example' } } });
    const bundle = {
      orgs: [
        { orgId: 'p-good', org: { name: 'Good' }, humanUsers: [user('pg1')], projects: [{ projectId: 'pgp', project: { name: 'P' } }] },
        { orgId: 'p-bad', org: { name: 'Bad' }, humanUsers: [user('pb1'), user('pb2')] },
        {
          orgId: 'p-apps',
          org: { name: 'Apps' },
          machineUsers: [{ userId: 'pm1', user: { userName: 'svc', name: 'S' } }],
          projects: [{ projectId: 'pap', project: { name: 'P' } }],
          apiApps: [{ appId: 'pa1', app: { projectId: 'pap', name: 'API' } }],
        },
      ],
    };
    const { scanner, root } = scanDocument(Buffer.from(JSON.stringify(bundle)), 'bundle');
    let commits = 0;
    const told: string[] = [];
    const importer = new Importer(
      {
        lifetimeLimits: LIMITS,
        managementProjectId: 'management',
        orgs,
        clients,
        masterKey: MasterKey.fromSecret('test'),
        begin: () => new WriteBatch(),
        hashPassword: async () => 'unused',
        commit: (batch) => {
          // The second org's phase-1 commit fails: its two people are not counted.
          if (++commits === 2) return batch.commit({ directoryWrites: { commit: () => Promise.reject(new Error('disk full')) }, durableDirectory: (p: Promise<unknown>) => p } as unknown as Storage);
          return batch.commit(storage);
        },
      },
      new Deadline(60_000, 'import'),
      { addToExistingOrgs: false, onProgress: (p, boundary) => boundary && told.push(`${p.phase} ${p.orgsDone}/${p.orgsTotal} u${p.users} p${p.projects} a${p.apps} e${p.errors}`) },
    );
    await importer.run(bundleOrgs(scanner, root, 'dataOrgs', false));
    expect(told).toEqual(['orgs 0/3 u0 p0 a0 e0', 'orgs 1/3 u1 p1 a0 e0', 'orgs 2/3 u1 p1 a0 e1', 'orgs 3/3 u2 p2 a1 e1', 'grants 3/3 u2 p2 a1 e1', 'members 3/3 u2 p2 a1 e1']);
  });

  it('a timeout stops between orgs; what was committed stays and a second run adds the rest', async () => {
    const { OrgsActor } = await import('../../src/actors/orgs.js');
    const { ClientsActor } = await import('../../src/actors/clients.js');
    const { MasterKey } = await import('../../src/crypto/master-key.js');
    const { Importer } = await import('../../src/services/migration/importer.js');
    const { Deadline } = await import('../../src/services/migration/deadline.js');
    const { bundleOrgs, scanDocument } = await import('../../src/services/migration/source.js');
    const orgs = new OrgsActor(storage, 'localhost');
    const clients = new ClientsActor(storage);
    const bundle = {
      orgs: [
        { orgId: 'first', org: { name: 'First' } },
        { orgId: 'second', org: { name: 'Second' } },
      ],
    };
    const run = (deadline: InstanceType<typeof Deadline>, onCommit: () => void) => {
      const { scanner, root } = scanDocument(Buffer.from(JSON.stringify(bundle)), 'bundle');
      const importer = new Importer(
        {
          lifetimeLimits: LIMITS,
          managementProjectId: 'management',
          orgs,
          clients,
          masterKey: MasterKey.fromSecret('test'),
          begin: () => new WriteBatch(),
          hashPassword: async () => 'unused',
          commit: async (batch) => {
            await batch.commit(storage);
            onCommit();
          },
        },
        deadline,
      );
      return importer.run(bundleOrgs(scanner, root, 'dataOrgs', false));
    };
    let now = 0;
    // The clock jumps past the deadline once the first org is committed.
    await expect(run(new Deadline(100, 'import', () => now), () => (now = 1000))).rejects.toMatchObject({
      kind: 'DeadlineExceeded',
      message: expect.stringContaining('1 of the import'),
    });
    expect(orgs.getOrg('first')).toBeDefined();
    expect(orgs.getOrg('second')).toBeUndefined();
    const again = await run(new Deadline(60_000, 'import'), () => {});
    expect(again.errors).toEqual([{ type: 'org', id: 'first', message: expect.stringContaining('already exists') }]);
    expect(orgs.getOrg('second')).toBeDefined();
  });
});
