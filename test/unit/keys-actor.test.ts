import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Database } from 'lmdb';
import { KeysActor } from '../../src/actors/keys.js';
import type { SigningAlg } from '../../src/config.js';
import type { Storage } from '../../src/storage/db.js';
import { LmdbDirectoryWrites, type DirectoryCommit, type DirectoryWrites } from '../../src/storage/directory-writes.js';
import { LmdbActivityLog } from '../../src/storage/activity-log.js';
import { openTempStorage, type TempStorage } from '../helpers/temp-storage.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { installClock } from '../../src/util/clock.js';
import { log } from '../../src/util/log.js';

/**
 * The signing key set's state machine on real LMDB: active → retired, next → active, a new next;
 * retired keys leave the JWKS once their publishUntil has passed (at the next rotation); and a
 * change whose write fails leaves the key set, the JWKS and the signing key exactly as before.
 */
const HOUR = 3_600_000;
const INTERVAL = 6 * HOUR;
const MAX_TOKEN = HOUR;
/** How long a retired key stays published after its rotation (the actor's rule). */
const PUBLISHED_AFTER_RETIREMENT = MAX_TOKEN + 60_000;
const masterKey = MasterKey.fromSecret('keys-actor-test');

let temp: TempStorage;
let storage: Storage;
let now: number;
let restoreClock: () => void;
const actors: KeysActor[] = [];

beforeEach(() => {
  temp = openTempStorage('keys');
  storage = temp.storage;
  now = Date.UTC(2030, 0, 1);
  restoreClock = installClock({ now: () => now });
});

afterEach(async () => {
  for (const actor of actors.splice(0)) actor.stop();
  restoreClock();
  await temp.close();
});

/**
 * How a write fails: the transaction is refused (nothing written), a put throws inside the real
 * LMDB transaction after earlier writes of it, or the commit succeeds but its sync fails.
 */
type Failure = 'none' | 'transaction' | 'midway' | 'durable';

/** The directory's commits over LMDB, whose writes of signing keys fail while `failing.mode` says so. */
function writes(failing: { mode: Failure }): DirectoryWrites {
  const keysDb = signingKeysDb(failing);
  const real = storage.directoryWrites;
  const lmdb = new LmdbDirectoryWrites(
    storage.root,
    (s) => (s === 'signingKeys' ? keysDb : s === 'meta' ? metaDb() : storage.stores[s]),
    storage.directoryLog,
    storage.uniqueKeys,
    new LmdbActivityLog(storage.root.openDB({ name: 'activity' }), storage.root.openDB({ name: 'activityByAggregate' })),
  );
  return Object.assign(Object.create(real) as DirectoryWrites, {
    commit: (commit: DirectoryCommit) => (failing.mode === 'transaction' ? Promise.reject(new Error('disk full')) : lmdb.commit(commit)),
  });
}

const metaDb = () => storage.root.openDB<any, string>({ name: 'meta', encoding: 'msgpack' });

/** The signing-key store, whose puts fail midway through a transaction while `failing.mode` says so. */
function signingKeysDb(failing: { mode: Failure }): Database<any, string> {
  const db = storage.stores.signingKeys;
  let puts = 0;
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'put' && failing.mode === 'midway') {
        return (...args: Parameters<typeof db.put>) => {
          if (++puts % 2 === 0) throw new Error('disk full');
          return target.put(...args);
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

async function started(alg: SigningAlg = 'EdDSA', failing: { mode: Failure } = { mode: 'none' }): Promise<KeysActor> {
  const durable = <R>(write: Promise<R>): Promise<R> => (failing.mode === 'durable' ? write.then(() => Promise.reject(new Error('fsync failed'))) : write);
  const actor = new KeysActor(storage.directoryReader, writes(failing), masterKey, alg, INTERVAL, MAX_TOKEN, durable);
  actors.push(actor);
  await actor.start();
  return actor;
}

const jwksKids = (actor: KeysActor): string[] => (JSON.parse(actor.jwks()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
const stored = () => new Map([...storage.stores.signingKeys.getRange()].map(({ key, value }) => [key, value as Record<string, any>]));
const storedStatus = () => Object.fromEntries([...stored()].map(([kid, k]) => [kid, k.status as string]));

/** Everything an observer of the actor sees. */
function snapshot(actor: KeysActor, kids: string[]) {
  return {
    jwks: actor.jwks(),
    signing: actor.signingKey().kid,
    der: Buffer.from(actor.signingKey().privateKeyDer).toString('base64'),
    verifies: kids.map((kid) => actor.verificationKey(kid)?.kid),
  };
}

describe('KeysActor start', () => {
  it.each<SigningAlg>(['EdDSA', 'ES256', 'RS256'])('%s: a first start stores an active and a next key; the JWKS lists the active one first', async (alg) => {
    const actor = await started(alg);
    const kids = jwksKids(actor);
    expect(kids).toHaveLength(2);
    expect(actor.signingKey()).toMatchObject({ kid: kids[0], alg });
    expect(storedStatus()).toEqual({ [kids[0]!]: 'active', [kids[1]!]: 'next' });
    for (const kid of kids) expect(actor.verificationKey(kid)).toMatchObject({ kid, alg });
    expect((JSON.parse(actor.jwks()) as { keys: Record<string, unknown>[] }).keys.every((k) => k.alg === alg && k.use === 'sig' && !('d' in k))).toBe(true);
  });

  it('a restart loads the stored keys unchanged', async () => {
    const first = await started();
    const before = snapshot(first, jwksKids(first));
    first.stop();
    const second = await started();
    expect(snapshot(second, jwksKids(first))).toEqual(before);
  });

  it('a changed algorithm retires the old active key at start (still published) and signs with the new one', async () => {
    const old = await started('EdDSA');
    const [oldActive, oldNext] = jwksKids(old);
    old.stop();
    now += 1000;
    const actor = await started('ES256');
    const kids = jwksKids(actor);
    expect(actor.signingKey().alg).toBe('ES256');
    expect(kids).toContain(oldActive);
    expect(kids).not.toContain(oldNext);
    expect(stored().get(oldActive!)).toMatchObject({ status: 'retired', publishUntil: now + PUBLISHED_AFTER_RETIREMENT });
    expect(Object.values(storedStatus()).sort()).toEqual(['active', 'next', 'retired']);
  });

  it('a store without a next key gets one at start; if that write fails, the stored keys stay as they were', async () => {
    const first = await started();
    const [active, next] = jwksKids(first);
    first.stop();
    await storage.stores.signingKeys.remove(next!);
    const failing = { mode: 'transaction' as Failure };
    await expect(started('EdDSA', failing)).rejects.toThrow('disk full');
    expect(storedStatus()).toEqual({ [active!]: 'active' });
    const actor = await started();
    const kids = jwksKids(actor);
    expect(kids[0]).toBe(active);
    expect(kids).toHaveLength(2);
    expect(storedStatus()).toEqual({ [active!]: 'active', [kids[1]!]: 'next' });
  });
});

describe('KeysActor rotation', () => {
  it('active → retired (published until the longest token lifetime + 1 min), next → active, a new next', async () => {
    const actor = await started();
    const [a, b] = jwksKids(actor);
    now += 5 * 60_000;
    const { kid } = await actor.rotate();
    const [active, next, retired, ...rest] = jwksKids(actor);
    expect(rest).toEqual([]);
    expect(kid).toBe(b);
    expect(active).toBe(b);
    expect(retired).toBe(a);
    expect(next).not.toBe(a);
    expect(actor.signingKey().kid).toBe(b);
    for (const k of [a, b, next]) expect(actor.verificationKey(k!)).toBeDefined();
    expect(stored().get(a!)).toMatchObject({ status: 'retired', publishUntil: now + PUBLISHED_AFTER_RETIREMENT });
    expect(stored().get(b!)).toMatchObject({ status: 'active', activatedAt: now });
    expect(stored().get(next!)).toMatchObject({ status: 'next' });
  });

  it.each([
    { name: 'a millisecond before publishUntil: still published', after: PUBLISHED_AFTER_RETIREMENT - 1, published: true },
    { name: 'at publishUntil: gone from the JWKS, the verification keys and the store', after: PUBLISHED_AFTER_RETIREMENT, published: false },
  ])('a retired key at the next rotation, $name', async ({ after, published }) => {
    const actor = await started();
    const [first] = jwksKids(actor);
    await actor.rotate();
    now += after;
    await actor.rotate();
    expect(jwksKids(actor).includes(first!)).toBe(published);
    expect(actor.verificationKey(first!) !== undefined).toBe(published);
    expect(stored().has(first!)).toBe(published);
    expect(jwksKids(actor)).toHaveLength(published ? 4 : 3);
  });

  it.each([
    { name: 'a millisecond before the interval', after: INTERVAL - 1, rotates: false },
    { name: 'at the interval', after: INTERVAL, rotates: true },
  ])('rotateIfDue $name', async ({ after, rotates }) => {
    const actor = await started();
    const before = actor.signingKey().kid;
    now += after;
    expect(await actor.rotateIfDue()).toBe(rotates);
    expect(actor.signingKey().kid !== before).toBe(rotates);
  });

  it('rotateIfDue twice at once (timer and tick) rotates once', async () => {
    const actor = await started();
    const [, next] = jwksKids(actor);
    now += INTERVAL;
    expect((await Promise.all([actor.rotateIfDue(), actor.rotateIfDue()])).sort()).toEqual([false, true]);
    expect(actor.signingKey().kid).toBe(next);
    expect(jwksKids(actor)).toHaveLength(3);
  });

  it('two rotations at once run one after the other: each promotes the key the JWKS published as next', async () => {
    const actor = await started();
    const [a, b] = jwksKids(actor);
    const [first, second] = await Promise.all([actor.rotate(), actor.rotate()]);
    expect(first.kid).toBe(b);
    const [active, next, ...retired] = jwksKids(actor);
    expect(second.kid).toBe(active);
    expect(active).not.toBe(b);
    expect(retired.sort()).toEqual([a, b].sort());
    // Memory and disk agree: one active, one next, both old keys retired.
    expect(storedStatus()).toEqual({ [active!]: 'active', [next!]: 'next', [a!]: 'retired', [b!]: 'retired' });
  });

  it('two actors over one store (two threads) rotating at once: both rotations land, one after the other (the key set is a compare-and-set)', async () => {
    const actor = await started();
    const [a, b] = jwksKids(actor);
    // Another thread's actor, loaded from the same store.
    const other = new KeysActor(storage.directoryReader, storage.directoryWrites, masterKey, 'EdDSA', INTERVAL, MAX_TOKEN);
    other.load();
    const [first, second] = await Promise.all([actor.rotate(), other.rotate()]);
    expect(first.kid).not.toBe(second.kid);
    // Both old keys retired, exactly one active and one next: neither rotation undid the other.
    const status = storedStatus();
    expect(Object.values(status).filter((s) => s === 'active')).toHaveLength(1);
    expect(Object.values(status).filter((s) => s === 'next')).toHaveLength(1);
    expect([status[a!], status[b!]]).toEqual(['retired', 'retired']);
    expect(status[first.kid] === 'active' || status[second.kid] === 'active').toBe(true);
  });

  it('rotate(true) replaces the next key too (the published next never signs)', async () => {
    const actor = await started();
    const [a, b] = jwksKids(actor);
    const { kid } = await actor.rotate(true);
    expect(kid).not.toBe(b);
    const kids = jwksKids(actor);
    expect(kids).not.toContain(b);
    expect(kids).toContain(a);
    expect(stored().has(b!)).toBe(false);
    expect(storedStatus()[kid]).toBe('active');
  });
});

describe('KeysActor: a failed write changes nothing', () => {
  const cases: { failure: Exclude<Failure, 'none'>; op: 'rotate' | 'rotate(true)' | 'rotateIfDue' }[] = [];
  for (const failure of ['transaction', 'midway', 'durable'] as const) for (const op of ['rotate', 'rotate(true)', 'rotateIfDue'] as const) cases.push({ failure, op });

  it.each(cases)('$op when the $failure fails: keys, JWKS and signing key as before; the next change starts from the set as stored', async ({ failure, op }) => {
    const failing = { mode: 'none' as Failure };
    const actor = await started('EdDSA', failing);
    // A retired key too, so every role is present.
    await actor.rotate();
    const kids = jwksKids(actor);
    const [active, next, retired] = kids;
    const before = snapshot(actor, kids);
    const disk = stored();
    now += INTERVAL;

    failing.mode = failure;
    const run = op === 'rotate' ? actor.rotate() : op === 'rotate(true)' ? actor.rotate(true) : actor.rotateIfDue();
    await expect(run).rejects.toThrow(failure === 'durable' ? 'fsync failed' : 'disk full');
    expect(snapshot(actor, kids)).toEqual(before);
    // Unless the commit itself went through, the store is untouched (a throw midway aborts the earlier writes too).
    if (failure !== 'durable') expect(stored()).toEqual(disk);

    failing.mode = 'none';
    if (failure === 'durable') {
      // The commit went through (only its sync failed): the store holds the rotated set, which every
      // thread reads and the next change starts from. Not due any more; the actor takes that set.
      expect(await actor.rotateIfDue()).toBe(false);
      const storedActive = Object.entries(storedStatus()).find(([, status]) => status === 'active')![0];
      expect(actor.signingKey().kid).toBe(storedActive);
      if (op !== 'rotate(true)') expect(storedActive).toBe(next);
      expect(jwksKids(actor).sort()).toEqual(Object.keys(storedStatus()).sort());
      return;
    }
    // Still due, and the next rotation promotes the key that was published as next.
    expect(await actor.rotateIfDue()).toBe(true);
    expect(actor.signingKey().kid).toBe(next);
    const after = jwksKids(actor);
    expect(after[0]).toBe(next);
    // The active key retired; the key retired an interval ago has expired from the JWKS.
    expect(after).toHaveLength(3);
    expect(after[2]).toBe(active);
    expect(after).not.toContain(retired);
    // Memory and disk agree after the recovery.
    expect(Object.keys(storedStatus()).sort()).toEqual([...after].sort());
    expect(
      Object.values(storedStatus())
        .filter((s) => s !== 'retired')
        .sort(),
    ).toEqual(['active', 'next']);
  });
});

describe('KeysActor timer', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  /**
   * The attempt the timer started (the spied rotateIfDue's promise), awaited to its end: the real
   * asynchronous work (key generation on libuv's pool, LMDB commits) then has run, however fast the
   * machine is; the timer's own handlers run in the loop's next turn (`turn`).
   */
  const settled = (attempt: { value: unknown } | undefined) =>
    Promise.resolve(attempt!.value).then(
      () => undefined,
      () => undefined,
    );
  /** The timer first asks whether this process holds the rotation lease (a promise): its answer is in once the loop turns. */
  const turn = () => new Promise((resolve) => setImmediate(resolve));

  it('a failed timed rotation is retried a minute later, not at once; stop() ends the timer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const failing = { mode: 'none' as Failure };
    const actor = await started('EdDSA', failing);
    const [, next] = jwksKids(actor);
    const attempts = vi.spyOn(actor, 'rotateIfDue');
    const errors = vi.spyOn(log, 'error').mockImplementation(() => {});
    now += INTERVAL;
    failing.mode = 'transaction';
    // The timer checks at least hourly.
    vi.advanceTimersByTime(HOUR);
    await turn();
    expect(attempts).toHaveBeenCalledTimes(1);
    await settled(attempts.mock.results[0]);
    await turn();
    expect(errors).toHaveBeenCalledTimes(1);
    expect(errors.mock.calls[0]![0]).toBe('key rotation failed');
    vi.advanceTimersByTime(60_000 - 1);
    expect(attempts).toHaveBeenCalledTimes(1);
    failing.mode = 'none';
    vi.advanceTimersByTime(1);
    await turn();
    expect(attempts).toHaveBeenCalledTimes(2);
    await settled(attempts.mock.results[1]);
    await turn();
    expect(actor.signingKey().kid).toBe(next);
    expect(errors).toHaveBeenCalledTimes(1);
    actor.stop();
    vi.advanceTimersByTime(10 * INTERVAL);
    await turn();
    expect(attempts).toHaveBeenCalledTimes(2);
  });

  it('rotates on the timer only while this process holds the rotation lease; without it, looks again a minute later', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const actor = await started('EdDSA', { mode: 'none' as Failure });
    const [active, next] = jwksKids(actor);
    let held = false;
    const asked: number[] = [];
    actor.rotateOnlyWhile(async () => {
      asked.push(now);
      return held;
    });
    const attempts = vi.spyOn(actor, 'rotateIfDue');
    now += INTERVAL;
    vi.advanceTimersByTime(HOUR);
    await turn();
    expect(asked).toHaveLength(1);
    expect(attempts).not.toHaveBeenCalled();
    expect(actor.signingKey().kid).toBe(active);
    held = true;
    vi.advanceTimersByTime(60_000);
    await turn();
    expect(attempts).toHaveBeenCalledTimes(1);
    await settled(attempts.mock.results[0]);
    expect(actor.signingKey().kid).toBe(next);
    actor.stop();
  });
});
