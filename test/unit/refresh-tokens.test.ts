import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RefreshTokensActor, type FamilyGrant, type Rotation } from '../../src/actors/refresh-tokens.js';
import { sha256 } from '../../src/util/hash.js';
import type { Storage } from '../../src/storage/db.js';
import { DecidedElsewhere } from '../../src/model/errors.js';
import { openTempStorage, type TempStorage } from '../helpers/temp-storage.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { installClock } from '../../src/util/clock.js';

/**
 * Refresh token families on real LMDB, on a clock the tests move: every use rotates; presenting
 * a superseded token is reuse (the grant handler then revokes the family), except within the
 * configured grace window, where a retry of the just-rotated token gets the same successor;
 * idle and absolute expiry; removal (revocation) and sweeping.
 */
const MINUTE = 60_000;
const IDLE = 30 * MINUTE;
const ABSOLUTE = 4 * 60 * MINUTE;
const GRACE = 10_000;
const masterKey = MasterKey.fromSecret('refresh-test');
const grant: FamilyGrant = { clientId: 'client-1', userId: 'user-1', sid: 'sid-1', scopes: ['openid', 'offline_access'], audience: ['client-1'], authTime: 1, amr: ['pwd'] };

let temp: TempStorage;
let storage: Storage;
let now: number;
let restoreClock: () => void;
let familyCounter = 0;

beforeEach(() => {
  temp = openTempStorage('refresh');
  storage = temp.storage;
  now = Date.UTC(2030, 0, 1);
  restoreClock = installClock({ now: () => now });
});

afterEach(async () => {
  restoreClock();
  await temp.close();
});

const actor = (grace = 0) => new RefreshTokensActor(storage.records, masterKey, IDLE, ABSOLUTE, grace);

async function family(refresh: RefreshTokensActor): Promise<{ id: string; token: string }> {
  const id = `grant-${++familyCounter}`;
  return { id, token: await refresh.create(id, grant) };
}

/** Rotates and waits for the write, as the grant handler does; returns the successor. */
async function rotated(refresh: RefreshTokensActor, token: string): Promise<string> {
  const rotation = await refresh.rotate(token);
  expect(rotation.status).toBe('rotated');
  if (rotation.status !== 'rotated') throw new Error('not rotated');
  await rotation.committed;
  return rotation.token;
}

const status = (rotation: Rotation) => rotation.status;

describe('RefreshTokensActor rotation', () => {
  it('a family starts with its first token; each use answers a new token of the same family and stores only digests', async () => {
    const refresh = actor();
    const { id, token } = await family(refresh);
    expect(token.startsWith(`${id}.`)).toBe(true);
    expect((await refresh.find(token))?.id).toBe(id);
    now += MINUTE;
    const second = await rotated(refresh, token);
    expect(second).not.toBe(token);
    expect(second.startsWith(`${id}.`)).toBe(true);
    const stored = storage.stores.refreshFamilies.get(id);
    expect(stored).toMatchObject({ ...grant, id, lastUsedAt: now, previous: { rotatedAt: now } });
    expect(JSON.stringify(stored)).not.toContain(second.slice(id.length + 1));
    expect(stored.previous.successorSealed).toBeUndefined();
    // The successor and (for the grace rule) the token it replaced are found; anything else is not.
    expect((await refresh.find(second))?.id).toBe(id);
    expect((await refresh.find(token))?.id).toBe(id);
    expect(await refresh.find(`${id}.not-the-secret`)).toBeUndefined();
  });

  it.each([
    { name: 'the current token', pick: (t: string[]) => t.at(-1)!, expected: 'rotated' },
    { name: 'the token it just replaced', pick: (t: string[]) => t.at(-2)!, expected: 'reused' },
    { name: 'an older superseded token', pick: (t: string[]) => t[0]!, expected: 'reused' },
    { name: 'the right family with a wrong secret (the family id is not secret)', pick: (t: string[]) => `${t[0]!.split('.')[0]}.forged`, expected: 'invalid' },
    { name: 'an unknown family', pick: () => 'unknown-family.secret', expected: 'invalid' },
    { name: 'no family part', pick: () => 'no-dot-at-all', expected: 'invalid' },
    { name: 'an empty family part', pick: () => '.secret', expected: 'invalid' },
    { name: 'an overlong token', pick: (t: string[]) => t.at(-1)! + 'x'.repeat(200), expected: 'invalid' },
  ])('without a grace window, presenting $name: $expected', async ({ pick, expected }) => {
    const refresh = actor();
    const { token } = await family(refresh);
    const tokens = [token];
    for (let i = 0; i < 3; i++) tokens.push(await rotated(refresh, tokens.at(-1)!));
    now += 1;
    expect(status(await refresh.rotate(pick(tokens)))).toBe(expected);
  });

  it('reuse is recognised for the 32 most recent superseded tokens besides the just-replaced one; older ones are merely invalid', async () => {
    const refresh = actor();
    const { token } = await family(refresh);
    const tokens = [token];
    for (let i = 0; i < 40; i++) tokens.push(await rotated(refresh, tokens.at(-1)!));
    // tokens[40] is current, tokens[39] the just-replaced one, tokens[7..38] the 32 superseded ones kept.
    const outcome: string[] = [];
    for (const t of tokens) outcome.push(status(await refresh.rotate(t)));
    expect(outcome.slice(0, 7)).toEqual(Array(7).fill('invalid'));
    expect(outcome.slice(7, 40)).toEqual(Array(33).fill('reused'));
    expect(outcome[40]).toBe('rotated');
  });

  it('two uses of one token in the same tick (before the write commits): one rotation, the other is reuse', async () => {
    const refresh = actor();
    const { token } = await family(refresh);
    const [first, second] = await Promise.all([refresh.rotate(token), refresh.rotate(token)]);
    expect([first.status, second.status]).toEqual(['rotated', 'reused']);
    if (first.status === 'rotated') await first.committed;
  });

  it('a rotation survives a restart (the stored family, not only memory)', async () => {
    const { token } = await family(actor());
    const next = await rotated(actor(), token);
    const restarted = actor();
    expect(status(await restarted.rotate(token))).toBe('reused');
    expect(status(await restarted.rotate(next))).toBe('rotated');
  });
});

describe('RefreshTokensActor grace window', () => {
  it.each([
    { name: 'at once', after: 0, expected: 'retried' },
    { name: 'exactly at the end of the window', after: GRACE, expected: 'retried' },
    { name: 'a millisecond after the window', after: GRACE + 1, expected: 'reused' },
  ])('the just-replaced token presented $name: $expected', async ({ after, expected }) => {
    const refresh = actor(GRACE);
    const { token } = await family(refresh);
    const successor = await rotated(refresh, token);
    now += after;
    const rotation = await refresh.rotate(token);
    expect(rotation.status).toBe(expected);
    // A retry gets the very successor the first use got, and the family is not rotated again.
    if (rotation.status === 'retried') expect(rotation.token).toBe(successor);
    expect(status(await refresh.rotate(successor))).toBe('rotated');
  });

  it('concurrent uses within the window: one rotation, the other a retry with the same successor', async () => {
    const refresh = actor(GRACE);
    const { token } = await family(refresh);
    const [first, second] = await Promise.all([refresh.rotate(token), refresh.rotate(token)]);
    expect([first.status, second.status]).toEqual(['rotated', 'retried']);
    if (first.status === 'rotated' && second.status === 'retried') {
      expect(second.token).toBe(first.token);
      await first.committed;
    }
  });

  it('a token older than the just-replaced one is reuse even within the window', async () => {
    const refresh = actor(GRACE);
    const { token } = await family(refresh);
    const second = await rotated(refresh, token);
    await rotated(refresh, second);
    expect(status(await refresh.rotate(token))).toBe('reused');
  });

  it.each([
    { name: 'a millisecond before its absolute expiry: retried', at: -1, expected: 'retried' },
    { name: 'at its absolute expiry (still within the window): reuse, no successor handed out', at: 0, expected: 'reused' },
  ])('a family $name', async ({ at, expected }) => {
    const shortLived = GRACE * 100;
    const refresh = new RefreshTokensActor(storage.records, masterKey, IDLE, shortLived, GRACE);
    const { token } = await family(refresh);
    now += shortLived - GRACE / 2;
    await rotated(refresh, token);
    now += GRACE / 2 + at;
    expect(status(await refresh.rotate(token))).toBe(expected);
  });
});

describe('RefreshTokensActor expiry and revocation', () => {
  it.each([
    { name: 'idle: a millisecond before the idle lifetime', steps: [IDLE - 1], expected: 'rotated' },
    { name: 'idle: at the idle lifetime', steps: [IDLE], expected: 'expired' },
    { name: 'idle: counted from the last use, not the creation', steps: [IDLE - 1, IDLE - 1], expected: 'rotated' },
    // Used every 25 minutes, the family never idles out but ends at its absolute lifetime.
    { name: 'absolute: a millisecond before, though used regularly', steps: [...Array(9).fill(25 * MINUTE), ABSOLUTE - 9 * 25 * MINUTE - 1], expected: 'rotated' },
    { name: 'absolute: at the lifetime, though used regularly', steps: [...Array(9).fill(25 * MINUTE), ABSOLUTE - 9 * 25 * MINUTE], expected: 'expired' },
  ])('$name: $expected', async ({ steps, expected }) => {
    const refresh = actor();
    let { token } = await family(refresh);
    for (const [i, step] of steps.entries()) {
      now += step;
      if (i < steps.length - 1) token = await rotated(refresh, token);
    }
    const rotation = await refresh.rotate(token);
    expect(rotation.status).toBe(expected);
    if (rotation.status === 'rotated') await rotation.committed;
    // An expired family is not rotated: the token stays expired (not reuse) when presented again.
    if (expected === 'expired') expect(status(await refresh.rotate(token))).toBe('expired');
  });

  it('remove (revocation): at once no token of the family works, before and after the write commits', async () => {
    const refresh = actor();
    const { id, token } = await family(refresh);
    const next = await rotated(refresh, token);
    const removal = refresh.remove(id);
    expect(status(await refresh.rotate(next))).toBe('invalid');
    expect(await refresh.familyOf(next)).toBeUndefined();
    await removal;
    expect(storage.stores.refreshFamilies.get(id)).toBeUndefined();
    expect(status(await refresh.rotate(next))).toBe('invalid');
    expect(status(await refresh.rotate(token))).toBe('invalid');
  });

  it('sweep removes only expired families', async () => {
    const refresh = actor();
    const idle = await family(refresh);
    now += IDLE / 2;
    const fresh = await family(refresh);
    now += IDLE / 2;
    expect(await refresh.sweep()).toBe(1);
    expect(storage.stores.refreshFamilies.get(idle.id)).toBeUndefined();
    expect(storage.stores.refreshFamilies.get(fresh.id)).toBeDefined();
    expect(status(await refresh.rotate(fresh.token))).toBe('rotated');
  });
});

describe('RefreshTokensActor rotation decided by the store', () => {
  // Two actors on one store, as two HTTP threads have: each rotates from what it read, and the
  // store's compare-and-set on the rotated token lets exactly one of them through.
  it.each([
    { grace: 0, loser: 'reused' },
    { grace: GRACE, loser: 'retried' },
  ])('one token rotated by two threads at once: one rotation stands; the other use is judged again ($loser)', async ({ grace, loser }) => {
    const a = actor(grace);
    const b = actor(grace);
    const { id, token } = await family(a);
    const [first, second] = await Promise.all([a.rotate(token), b.rotate(token)]);
    expect([first.status, second.status]).toEqual(['rotated', 'rotated']);
    if (first.status !== 'rotated' || second.status !== 'rotated') throw new Error('not rotated');
    const settled = await Promise.allSettled([first.committed, second.committed]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected']);
    expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(DecidedElsewhere);
    // The store holds the winner's rotation, and the loser's second look sees it.
    expect(Buffer.from((storage.stores.refreshFamilies.get(id) as { currentHash: Uint8Array }).currentHash)).toEqual(sha256(first.token));
    const again = await b.rotate(token);
    expect(again.status).toBe(loser);
    if (again.status === 'retried') expect(again.token).toBe(first.token);
  });
});

describe('a retry answered from a rotation still in flight', () => {
  it('holds only if that rotation wins: when another thread rotated first, its successor is void (DecidedElsewhere)', async () => {
    const a = actor(GRACE);
    const b = actor(GRACE);
    // A's rotation is decided first: a retry on A, answered from it before it was decided, holds.
    const one = await family(a);
    const [first, retry, late] = await Promise.all([a.rotate(one.token), a.rotate(one.token), b.rotate(one.token)]);
    expect([first.status, retry.status, late.status]).toEqual(['rotated', 'retried', 'rotated']);
    if (first.status !== 'rotated' || retry.status !== 'retried' || late.status !== 'rotated') throw new Error('unexpected');
    expect(retry.token).toBe(first.token);
    await expect(retry.committed).resolves.toBeUndefined();
    await expect(first.committed).resolves.toBeUndefined();
    await expect(late.committed).rejects.toBeInstanceOf(DecidedElsewhere);

    // B's rotation is decided first (its write was issued first): A's retry rides on a rotation that lost.
    const two = await family(a);
    const [winner, losing, losingRetry] = await Promise.all([b.rotate(two.token), a.rotate(two.token), a.rotate(two.token)]);
    expect([winner.status, losing.status, losingRetry.status]).toEqual(['rotated', 'rotated', 'retried']);
    if (winner.status !== 'rotated' || losing.status !== 'rotated' || losingRetry.status !== 'retried') throw new Error('unexpected');
    await expect(winner.committed).resolves.toBeUndefined();
    await expect(losing.committed).rejects.toBeInstanceOf(DecidedElsewhere);
    await expect(losingRetry.committed).rejects.toBeInstanceOf(DecidedElsewhere);
    // Judged again, the retry gets the winner's successor.
    const again = await a.rotate(two.token);
    expect(again.status).toBe('retried');
    if (again.status === 'retried') expect(again.token).toBe(winner.token);
  });
});
