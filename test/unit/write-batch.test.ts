import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WriteBatch } from '../../src/storage/batch.js';
import { openStorage, type Storage } from '../../src/storage/db.js';
import { Table } from '../../src/storage/table.js';

/** Atomic import commits: staged rows are in memory at once, written together, or taken back. */
let dir: string;
let storage: Storage;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sesame-batch-'));
  storage = openStorage(dir, 'commit');
});

afterEach(async () => {
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('WriteBatch', () => {
  it('commits rows of several stores in one transaction', async () => {
    const orgs = new Table<{ id: string; name: string }>(storage.stores.orgs);
    const users = new Table<{ id: string; orgId: string }>(storage.stores.users);
    const batch = new WriteBatch();
    orgs.stage({ id: 'o1', name: 'one' }, batch);
    users.stage({ id: 'u1', orgId: 'o1' }, batch);
    orgs.stage({ id: 'o1', name: 'renamed' }, batch);
    expect(orgs.get('o1')?.name).toBe('renamed');
    expect(storage.stores.orgs.get('o1')).toBeUndefined();
    expect(batch.size).toBe(3);
    await batch.commit(storage);
    expect(storage.stores.orgs.get('o1')).toEqual({ id: 'o1', name: 'renamed' });
    expect(storage.stores.users.get('u1')).toEqual({ id: 'u1', orgId: 'o1' });
    expect(batch.size).toBe(0);
  });

  it('rollback restores memory (also rows staged twice and side indexes)', async () => {
    const orgs = new Table<{ id: string; name: string }>(storage.stores.orgs);
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
    const orgs = new Table<{ id: string; name: string }>(storage.stores.orgs);
    const batch = new WriteBatch();
    orgs.stage({ id: 'o3', name: 'doomed' }, batch);
    const failing = { root: { transaction: () => Promise.reject(new Error('disk full')) }, durable: <T>(p: Promise<T>) => p } as unknown as Storage;
    await expect(batch.commit(failing)).rejects.toThrow('disk full');
    expect(orgs.get('o3')).toBeUndefined();
    expect(storage.stores.orgs.get('o3')).toBeUndefined();
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
        orgs,
        clients,
        masterKey: MasterKey.fromSecret('test'),
        hashPassword: async () => 'unused',
        commit: (batch) => {
          commits++;
          // The second org's phase-1 commit fails.
          if (commits === 2) return batch.commit({ root: { transaction: () => Promise.reject(new Error('disk full')) }, durable: (p: Promise<unknown>) => p } as unknown as Storage);
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

  it('a timeout stops between orgs; what was committed stays and a second run adds the rest', async () => {
    const { OrgsActor } = await import('../../src/actors/orgs.js');
    const { ClientsActor } = await import('../../src/actors/clients.js');
    const { MasterKey } = await import('../../src/crypto/master-key.js');
    const { Importer } = await import('../../src/services/migration/importer.js');
    const { Deadline } = await import('../../src/services/migration/deadline.js');
    const { bundleOrgs, scanDocument } = await import('../../src/services/migration/source.js');
    const orgs = new OrgsActor(storage, 'localhost');
    const clients = new ClientsActor(storage);
    const bundle = { orgs: [{ orgId: 'first', org: { name: 'First' } }, { orgId: 'second', org: { name: 'Second' } }] };
    const run = (deadline: InstanceType<typeof Deadline>, onCommit: () => void) => {
      const { scanner, root } = scanDocument(Buffer.from(JSON.stringify(bundle)), 'bundle');
      const importer = new Importer(
        {
          orgs,
          clients,
          masterKey: MasterKey.fromSecret('test'),
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
