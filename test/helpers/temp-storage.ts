import { afterEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStorage, type Storage } from '../../src/storage/db.js';

/**
 * Real LMDB storage in a fresh temp dir, for unit tests of the actors and the storage layer.
 * `commit` durability: a unit test needs no fsync. `reopen()` closes and opens the same dir (what
 * a restart finds); `close()` closes and removes it.
 */
export interface TempStorage {
  readonly dir: string;
  readonly storage: Storage;
  reopen(): Promise<Storage>;
  close(): Promise<void>;
}

export function openTempStorage(name: string): TempStorage {
  const dir = mkdtempSync(join(tmpdir(), `sesame-${name}-`));
  let storage = openStorage(dir, 'commit');
  return {
    dir,
    get storage() {
      return storage;
    },
    async reopen() {
      await storage.close();
      return (storage = openStorage(dir, 'commit'));
    },
    async close() {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A temp storage for each test of a file: `storage()` opens it on first use in a test, and it is
 * closed and removed after that test.
 */
export function tempStorageEach(name: string): () => Storage {
  let current: TempStorage | undefined;
  afterEach(async () => {
    await current?.close();
    current = undefined;
  });
  return () => (current ??= openTempStorage(name)).storage;
}
