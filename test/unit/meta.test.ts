import type { DirectoryCommit, DirectoryWrites } from '../../src/storage/directory-writes.js';
import { WriteConflict } from '../../src/model/errors.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MetaStore } from '../../src/storage/meta.js';
import { SettingsActor, type SecurityPolicy } from '../../src/actors/settings.js';
import { SCHEMA_VERSION, type Storage } from '../../src/storage/db.js';
import { openTempStorage, type TempStorage } from '../helpers/temp-storage.js';
import type { View } from '../../src/util/readonly.js';

/** The `meta` store has one writer, MetaStore; settings go through it, and a failed write is taken back. */
let temp: TempStorage;
let storage: Storage;

beforeEach(() => {
  temp = openTempStorage('meta');
  storage = temp.storage;
});

afterEach(async () => {
  await temp.close();
});

describe('MetaStore', () => {
  it('keeps the schema version, the master key check (sealed once) and the instance across a restart', async () => {
    expect(storage.meta.schemaVersion()).toBe(SCHEMA_VERSION);
    // A second copy loaded before the seal (another thread, or node) does not know of it.
    const other = new MetaStore(storage.directoryReader, storage.directoryWrites);
    await storage.meta.sealMasterKeyCheck(new Uint8Array([1, 2]));
    await expect(storage.meta.sealMasterKeyCheck(new Uint8Array([3]))).rejects.toThrow();
    // The store refuses it too: a check is sealed once, whoever seals first.
    await expect(other.sealMasterKeyCheck(new Uint8Array([4]))).rejects.toBeInstanceOf(WriteConflict);
    await storage.meta.setInstance({ defaultOrgId: 'o1' });
    storage = await temp.reopen();
    expect([...storage.meta.masterKeyCheck()!]).toEqual([1, 2]);
    expect(storage.meta.instance<{ defaultOrgId: string }>()?.defaultOrgId).toBe('o1');
  });

  it('a settings write that fails is taken back, and the pages follow the policy in force again', async () => {
    let fail = false;
    const real = storage.directoryWrites;
    const writes = Object.assign(Object.create(real) as DirectoryWrites, { commit: (commit: DirectoryCommit) => (fail ? Promise.reject(new Error('disk full')) : real.commit(commit)) });
    const meta = new MetaStore(storage.directoryReader, writes);
    const seen: View<SecurityPolicy>[] = [];
    const settings = new SettingsActor(meta, undefined, (p) => seen.push(p));
    await settings.setFeatures({ oidcTokenExchange: true });
    fail = true;
    await expect(settings.setFeatures({ oidcTokenExchange: false })).rejects.toThrow('disk full');
    expect(settings.tokenExchangeEnabled()).toBe(true);
    await expect(settings.setSecurityPolicy({ enableIframeEmbedding: true })).rejects.toThrow('disk full');
    expect(settings.securityPolicy().enableIframeEmbedding).toBe(false);
    expect(seen.map((p) => p.enableIframeEmbedding)).toEqual([false, true, false]);
    fail = false;
    await settings.setSecurityPolicy({ allowedOrigins: ['https://a.example'] });
    expect(new SettingsActor(new MetaStore(storage.directoryReader, writes), undefined).securityPolicy().allowedOrigins).toEqual(['https://a.example']);
  });
});
