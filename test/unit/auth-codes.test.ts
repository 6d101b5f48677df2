import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuthCodesActor, type CodeGrant } from '../../src/actors/auth-codes.js';
import type { Storage } from '../../src/storage/db.js';
import type { StorePort } from '../../src/storage/store-port.js';
import { DecidedElsewhere } from '../../src/model/errors.js';
import { openTempStorage, type TempStorage } from '../helpers/temp-storage.js';
import { installClock } from '../../src/util/clock.js';
import { sha256Base64url } from '../../src/util/hash.js';

/**
 * Authorization codes on real LMDB: single use (a second consume is refused, and `used` tells the
 * grant handler it is a replay, which revokes the grant: see test/races.test.ts), 60 seconds,
 * recognised as used after a restart, swept after expiry, and stored only under their digest.
 */
/** A code lives 60 seconds (RFC 6749 §4.1.2 recommends at most 10 minutes). */
const CODE_LIFETIME_MS = 60_000;
const grant: CodeGrant = {
  grantId: 'grant-1',
  clientId: 'client-1',
  redirectUri: 'https://rp.example/cb',
  codeChallenge: 'challenge',
  scopes: ['openid'],
  audience: ['client-1'],
  userId: 'user-1',
  sid: 'sid-1',
  authTime: 1,
  amr: ['pwd'],
};

let temp: TempStorage;
let storage: Storage;
let now: number;
let restoreClock: () => void;

beforeEach(() => {
  temp = openTempStorage('codes');
  storage = temp.storage;
  now = Date.UTC(2030, 0, 1);
  restoreClock = installClock({ now: () => now });
});

afterEach(async () => {
  restoreClock();
  await temp.close();
});

describe('AuthCodesActor', () => {
  it('issues a code stored only under its digest; find returns the grant, unused', async () => {
    const codes = new AuthCodesActor(storage.records);
    const code = await codes.issue(grant);
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(storage.stores.authCodes.get(code)).toBeUndefined();
    expect(storage.stores.authCodes.get(sha256Base64url(code))).toMatchObject({ ...grant, exp: now + CODE_LIFETIME_MS });
    const found = (await codes.find(code))!;
    expect(found.grant).toMatchObject(grant);
    expect(found.used).toBe(false);
    expect(await codes.find(`${code}x`)).toBeUndefined();
  });

  it('single use: the first consume wins, a second (even from a find before it) is refused, and later finds say used', async () => {
    const codes = new AuthCodesActor(storage.records);
    const code = await codes.issue(grant);
    const a = (await codes.find(code))!;
    const b = (await codes.find(code))!;
    const first = a.consume();
    await expect(b.consume()).rejects.toThrow('code already used');
    await first;
    expect((await codes.find(code))!.used).toBe(true);
    await expect(a.consume()).rejects.toThrow('code already used');
  });

  it('a used code is still recognised as used after a restart (so a replay revokes the grant)', async () => {
    const code = await new AuthCodesActor(storage.records).issue(grant);
    const unused = await new AuthCodesActor(storage.records).issue({ ...grant, grantId: 'grant-2' });
    const codes = new AuthCodesActor(storage.records);
    await (await codes.find(code))!.consume();
    const restarted = new AuthCodesActor(storage.records);
    expect(await restarted.find(code)).toMatchObject({ used: true, grant: { grantId: 'grant-1' } });
    expect(await restarted.find(unused)).toMatchObject({ used: false, grant: { grantId: 'grant-2' } });
  });

  it.each([
    { name: 'a millisecond before its lifetime: found', after: CODE_LIFETIME_MS - 1, found: true },
    { name: 'at its lifetime: gone', after: CODE_LIFETIME_MS, found: false },
  ])('a code $name', async ({ after, found }) => {
    const codes = new AuthCodesActor(storage.records);
    const code = await codes.issue(grant);
    now += after;
    expect((await codes.find(code)) !== undefined).toBe(found);
    // Also for a used code: once expired, a replay is merely an unknown code.
    const used = await codes.issue(grant);
    await (await codes.find(used))!.consume();
    now += after;
    expect((await codes.find(used)) !== undefined).toBe(found);
  });

  it('sweep removes expired codes from the store, keeps the others', async () => {
    const codes = new AuthCodesActor(storage.records);
    const old = await codes.issue(grant);
    now += CODE_LIFETIME_MS / 2;
    const fresh = await codes.issue(grant);
    now += CODE_LIFETIME_MS / 2;
    expect(await codes.find(old)).toBeUndefined();
    expect(await codes.find(old, 0)).toBeDefined();
    expect(await codes.sweep()).toBe(1);
    expect(await codes.find(old, 0)).toBeUndefined();
    expect(storage.stores.authCodes.get(sha256Base64url(old))).toBeUndefined();
    expect(storage.stores.authCodes.get(sha256Base64url(fresh))).toBeDefined();
    expect(await codes.find(fresh)).toBeDefined();
  });
});

describe('a code whose write fails', () => {
  it('is not kept: it was never handed out', async () => {
    const failing: StorePort = Object.assign(Object.create(storage.records) as StorePort, { durable: () => Promise.reject(new Error('disk full')) });
    const codes = new AuthCodesActor(failing);
    let issued: string | undefined;
    const attempt = codes.issue(grant).then((code) => (issued = code));
    await expect(attempt).rejects.toThrow('disk full');
    expect(issued).toBeUndefined();
  });

  it('the store decides between threads: a code another thread claimed first is refused here as a replay', async () => {
    const codes = new AuthCodesActor(storage.records);
    const code = await codes.issue(grant);
    const found = (await codes.find(code))!;
    expect(found.used).toBe(false);
    // Another thread (its own actor, the same store) redeems it meanwhile.
    const elsewhere = new AuthCodesActor(storage.records);
    await (await elsewhere.find(code))!.consume();
    await expect(found.consume()).rejects.toBeInstanceOf(DecidedElsewhere);
    expect((await codes.find(code))!.used).toBe(true);
  });
});
