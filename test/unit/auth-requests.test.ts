import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuthRequestsActor, AUTH_REQUEST_LIFETIME_MS } from '../../src/actors/auth-requests.js';
import type { ValidatedAuthRequest } from '../../src/protocol/authorize/validate.js';
import type { Storage } from '../../src/storage/db.js';
import type { StorePort } from '../../src/storage/store-port.js';
import { openTempStorage, type TempStorage } from '../helpers/temp-storage.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { installClock } from '../../src/util/clock.js';

/** The login moves an auth request on only through the actor's transitions, each persisted with its memory change. */
const request = { clientId: 'app', prompt: new Set(['login']) } as unknown as ValidatedAuthRequest;
const masterKey = MasterKey.fromSecret('test');
let temp: TempStorage;
let storage: Storage;
let actor: AuthRequestsActor;

beforeEach(() => {
  temp = openTempStorage('auth-requests');
  storage = temp.storage;
  actor = new AuthRequestsActor(storage.records, masterKey);
});

afterEach(async () => {
  await temp.close();
});

const restart = async () => {
  storage = await temp.reopen();
  return new AuthRequestsActor(storage.records, masterKey);
};

describe('AuthRequestsActor transitions', () => {
  let restore: (() => void) | undefined;
  afterEach(() => restore?.());

  it('choose user → pass password → fail and pass TOTP → finish', async () => {
    const auth = await actor.create('agent', request, 'en', 'loginname');
    await actor.chooseUser(auth, 'alice@org.example', 'u1');
    expect(auth).toMatchObject({ step: 'password', loginName: 'alice@org.example', userId: 'u1', checks: {}, otpFailures: 0 });
    expect(auth.authenticatedUserId).toBeUndefined();
    await actor.passPassword(auth, 'u1', 100);
    expect(auth).toMatchObject({ userId: 'u1', authenticatedUserId: 'u1', checks: { passwordAt: 100 } });
    await actor.enterStep(auth, 'otp');
    expect(auth.step).toBe('otp');
    expect(await actor.failOtp(auth)).toBe(1);
    expect(await actor.failOtp(auth)).toBe(2);
    await actor.passOtp(auth, 130);
    expect(auth.checks).toEqual({ passwordAt: 100, secondFactorAt: 130 });
    await actor.finish(auth.id);
    expect(await actor.get(auth.id, 'agent')).toBeUndefined();
  });

  it('back to the login name forgets what was passed; the typed name stays', async () => {
    const auth = await actor.create('agent', request, 'en', 'loginname');
    await actor.chooseUser(auth, 'alice', 'u1');
    await actor.passPassword(auth, 'u1', 100);
    await actor.enterStep(auth, 'mfa-setup');
    expect(auth.pendingOtpSecret).toMatch(/^[A-Z2-7]+$/);
    await actor.backToLoginName(auth);
    expect(auth).toMatchObject({ step: 'loginname', loginName: 'alice', checks: {} });
    expect(auth.userId).toBeUndefined();
    expect(auth.authenticatedUserId).toBeUndefined();
    expect(auth.pendingOtpSecret).toBeUndefined();
  });

  it('a new user chosen does not inherit checks; entering a step resets its TOTP failures and secret', async () => {
    const auth = await actor.create('agent', request, 'en', 'password', { userId: 'u1', checks: { passwordAt: 5 } });
    expect(auth.authenticatedUserId).toBe('u1');
    await actor.enterStep(auth, 'mfa-setup');
    const first = auth.pendingOtpSecret;
    expect(await actor.failOtp(auth)).toBe(1);
    await actor.enterStep(auth, 'mfa-setup');
    expect(auth.otpFailures).toBe(0);
    expect(auth.pendingOtpSecret).not.toBe(first);
    await actor.leaveOtpSetup(auth);
    expect(auth.pendingOtpSecret).toBeUndefined();
    await actor.chooseUser(auth, 'bob', 'u2');
    expect(auth.checks).toEqual({});
    expect(auth.authenticatedUserId).toBeUndefined();
  });

  it('resumes a browser session with the checks it still vouches for', async () => {
    const auth = await actor.create('agent', request, 'en', 'select');
    await actor.resumeSession(auth, 'otp', 'u1', { passwordAt: 7 });
    expect(auth).toMatchObject({ step: 'otp', userId: 'u1', authenticatedUserId: 'u1', checks: { passwordAt: 7 } });
    await actor.resumeSession(auth, 'password', 'u2', undefined);
    expect(auth).toMatchObject({ step: 'password', userId: 'u2', checks: {} });
    expect(auth.authenticatedUserId).toBeUndefined();
    await actor.offerLoginName(auth);
    expect(auth.step).toBe('loginname');
    await actor.startRegistration(auth);
    expect(auth.step).toBe('register');
  });

  it('a request is bound to its agent until rebound, and expires', async () => {
    let now = 1_000_000;
    restore = installClock({ now: () => now });
    const auth = await actor.create('agent', request, 'en', 'loginname');
    expect(await actor.get(auth.id, 'other')).toBeUndefined();
    await actor.rebind(auth, 'renewed');
    expect(await actor.get(auth.id, 'agent')).toBeUndefined();
    expect((await actor.get(auth.id, 'renewed'))?.cookieRenewed).toBe(true);
    now += AUTH_REQUEST_LIFETIME_MS;
    expect(await actor.get(auth.id, 'renewed')).toBeUndefined();
  });

  it('a restart keeps requests under way (the enrollment secret sealed on disk), not expired ones', async () => {
    let now = 1_000_000;
    restore = installClock({ now: () => now });
    const auth = await actor.create('agent', request, 'en', 'loginname');
    await actor.chooseUser(auth, 'alice', 'u1');
    await actor.passPassword(auth, 'u1', 100);
    await actor.enterStep(auth, 'mfa-setup');
    const secret = auth.pendingOtpSecret!;
    const old = await actor.create('agent', request, 'en', 'loginname');
    now += 1000;
    const young = await actor.create('agent', request, 'en', 'loginname');
    expect(JSON.stringify(storage.stores.authRequests.get(auth.id))).not.toContain(secret);
    now = 1_000_000 + AUTH_REQUEST_LIFETIME_MS + 500;
    const again = await restart();
    expect(await again.get(old.id, 'agent')).toBeUndefined();
    const back = (await again.get(young.id, 'agent'))!;
    expect(back.request.prompt.has('login' as never)).toBe(true);
    now = 1_000_000;
    const resumed = (await (await restart()).get(auth.id, 'agent'))!;
    expect(resumed).toMatchObject({ step: 'mfa-setup', userId: 'u1', authenticatedUserId: 'u1', checks: { passwordAt: 100 }, pendingOtpSecret: secret });
    now = 1_000_000 + AUTH_REQUEST_LIFETIME_MS + 500;
    const swept = await restart();
    expect(await swept.sweep()).toBe(2);
    expect(storage.stores.authRequests.get(old.id)).toBeUndefined();
    expect(storage.stores.authRequests.get(young.id)).toBeDefined();
  });

  it('a transition whose write is not durable leaves the view as it was; a finished request is not written again', async () => {
    const auth = await actor.create('agent', request, 'en', 'loginname');
    await actor.chooseUser(auth, 'alice', 'u1');
    let fail = false;
    const durable = <R>(write: Promise<R>): Promise<R> => (fail ? write.then(() => Promise.reject(new Error('disk full'))) : storage.durable(write));
    const flaky = new AuthRequestsActor(Object.assign(Object.create(storage.records) as StorePort, { durable }), masterKey);
    const view = (await flaky.get(auth.id, 'agent'))!;
    fail = true;
    await expect(flaky.passPassword(view, 'u1', 100)).rejects.toThrow('disk full');
    expect(view).toMatchObject({ step: 'password', userId: 'u1', checks: {} });
    expect(view.authenticatedUserId).toBeUndefined();
    fail = false;
    await flaky.finish(view.id);
    await flaky.passOtp(view, 5);
    expect(view.checks).toMatchObject({ secondFactorAt: 5 });
    await flaky.passOtp(view, 5);
    expect(storage.stores.authRequests.get(view.id)).toBeUndefined();
  });

  it('views are read-only (a type error to change them)', async () => {
    const auth = await actor.create('agent', request, 'en', 'loginname');
    // @ts-expect-error changed only through transitions
    auth.userId = 'u1';
    // @ts-expect-error deep
    auth.checks.passwordAt = 1;
    expect(auth).toBeDefined();
  });
});

describe('the per-address bound, counted in the store', () => {
  it("counts every thread alike: the address's oldest makes room, a finished one frees its place, other addresses are untouched, no address is stored", async () => {
    const one = new AuthRequestsActor(storage.records, masterKey, 3);
    const two = new AuthRequestsActor(storage.records, masterKey, 3);
    const at = (actor: AuthRequestsActor, address: string) => actor.create('agent', request, 'en', 'loginname', { address });
    const a = await at(one, '198.51.100.1');
    const b = await at(two, '198.51.100.1');
    const other = await at(two, '198.51.100.2');
    const c = await at(one, '198.51.100.1');
    await one.finish(c.id);
    const d = await at(two, '198.51.100.1');
    expect(await Promise.all([a, b, d].map(async (r) => (await one.get(r.id, 'agent')) !== undefined))).toEqual([true, true, true]);
    // A fourth under way: the oldest (a) goes, whichever thread made it.
    const e = await at(one, '198.51.100.1');
    expect(await Promise.all([a, b, d, e].map(async (r) => (await two.get(r.id, 'agent')) !== undefined))).toEqual([false, true, true, true]);
    expect(await two.get(other.id, 'agent')).toBeDefined();
    const stored = JSON.stringify([...storage.stores.authRequestsByAddress.getRange()]) + JSON.stringify([...storage.stores.authRequests.getRange()]);
    expect(stored).not.toContain('198.51.100');
  });
});
