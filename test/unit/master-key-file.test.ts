import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadMasterKey, MasterKeyMismatchError } from '../../src/storage/master-key-file.js';

/** The data dir's `masterkey` file: made once for a fresh dir, refused when it holds no real key. */
const dirs: string[] = [];
const dir = () => {
  const d = mkdtempSync(join(tmpdir(), 'sesame-mk-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('master key file', () => {
  it('is generated for a fresh dir and opens what it sealed on the next load', () => {
    const d = dir();
    const sealed = loadMasterKey(d, undefined, true).encrypt(Buffer.from('secret'));
    expect(loadMasterKey(d, undefined, false).decrypt(sealed).toString()).toBe('secret');
  });

  it.each(['', '\n', 'short-key'])('refuses a file holding %j (a guessable key)', (content) => {
    const d = dir();
    writeFileSync(join(d, 'masterkey'), content);
    expect(() => loadMasterKey(d, undefined, false)).toThrow(MasterKeyMismatchError);
    expect(() => loadMasterKey(d, undefined, true)).toThrow(/fewer than 32 characters/);
  });
});
