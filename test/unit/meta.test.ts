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
    expect(storage.meta.schemaVersion(SCHEMA_VERSION)).toBe(SCHEMA_VERSION);
    storage.meta.sealMasterKeyCheck(new Uint8Array([1, 2]));
    expect(() => storage.meta.sealMasterKeyCheck(new Uint8Array([3]))).toThrow();
    await storage.meta.setInstance({ defaultOrgId: 'o1' });
    storage = await temp.reopen();
    expect([...storage.meta.masterKeyCheck()!]).toEqual([1, 2]);
    expect(storage.meta.instance<{ defaultOrgId: string }>()?.defaultOrgId).toBe('o1');
  });

  it('a settings write that fails is taken back, and the pages follow the policy in force again', async () => {
    let fail = false;
    const db = new Proxy(storage.root.openDB<any, string>({ name: 'meta', encoding: 'msgpack' }), {
      get: (target, key) => (key === 'put' && fail ? () => Promise.reject(new Error('disk full')) : Reflect.get(target, key)),
    });
    const meta = new MetaStore(db);
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
    expect(new SettingsActor(new MetaStore(db), undefined).securityPolicy().allowedOrigins).toEqual(['https://a.example']);
  });
});
