import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DeviceAuthorizationsActor, TooManyDeviceAuthorizations } from '../../src/actors/device-authorizations.js';
import { MasterKey } from '../../src/crypto/master-key.js';
import { DEVICE_FLOW_RULES, normalizeUserCode } from '../../src/protocol/device-flow.js';
import { DecidedElsewhere } from '../../src/model/errors.js';
import { openTempStorage, type TempStorage } from '../helpers/temp-storage.js';

/**
 * The device authorizations actor on real LMDB: single redemption under concurrency, the pace of
 * polls, the per-client bound, and what a restart finds.
 */
const masterKey = MasterKey.fromSecret('device-test');
const T0 = 1_800_000_000_000;
let temp: TempStorage;
const actor = (rules = DEVICE_FLOW_RULES) => new DeviceAuthorizationsActor(temp.storage.records, masterKey, rules);
const approval = { grantId: 'g1', userId: 'u1', sid: 's1', audience: ['c1'], authTime: 1, amr: ['pwd'] };

beforeEach(() => {
  temp = openTempStorage('device-authorizations');
});
afterEach(async () => {
  await temp.close();
});

describe('DeviceAuthorizationsActor', () => {
  it('redeems an approved authorization once, also when two redemptions come in the same tick', async () => {
    const devices = actor();
    const { deviceCode, userCode } = await devices.start({ clientId: 'c1', scopes: ['openid'], audienceProjects: [] }, T0);
    const found = (await devices.pendingByUserCode(normalizeUserCode(userCode)!, T0))!;
    expect(await devices.approve(found, approval, T0)).toBe(true);
    expect(await devices.deny(found, T0)).toBe(false);
    const view = (await devices.byDeviceCode(deviceCode))!;
    const first = devices.redeem(view);
    const second = devices.redeem(view);
    if (!first.redeemed || !second.redeemed) throw new Error('an approved authorization is redeemable');
    const settled = await Promise.allSettled([first.written, second.written]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected']);
    expect(devices.redeem((await devices.byDeviceCode(deviceCode))!).redeemed).toBe(false);
    // A restart finds it redeemed.
    await temp.reopen();
    const after = (await actor().byDeviceCode(deviceCode))!;
    expect(after.state).toBe('redeemed');
  });

  it('the store decides between threads: of two actors on one store (two threads), one redemption stands', async () => {
    const a = actor();
    const { deviceCode, userCode } = await a.start({ clientId: 'c1', scopes: ['openid'], audienceProjects: [] }, T0);
    expect(await a.approve((await a.pendingByUserCode(normalizeUserCode(userCode)!, T0))!, approval, T0)).toBe(true);
    const b = actor();
    const first = a.redeem((await a.byDeviceCode(deviceCode))!);
    const second = b.redeem((await b.byDeviceCode(deviceCode))!);
    expect([first.redeemed, second.redeemed]).toEqual([true, true]);
    if (!first.redeemed || !second.redeemed) throw new Error('not redeemed');
    const settled = await Promise.allSettled([first.written, second.written]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected']);
    expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(DecidedElsewhere);
  });

  it('paces polls: an early one is slow_down and adds 5 s for good, whichever thread it reaches', async () => {
    const devices = actor();
    const other = actor();
    const { deviceCode } = await devices.start({ clientId: 'c1', scopes: [], audienceProjects: [] }, T0);
    const view = (await devices.byDeviceCode(deviceCode))!;
    expect(await devices.poll(view, T0 + 5_000)).toBe('ok');
    expect(await other.poll(view, T0 + 9_999)).toBe('slow_down');
    expect(await devices.poll(view, T0 + 19_000)).toBe('slow_down');
    expect(await other.poll(view, T0 + 34_000)).toBe('ok');
    // Two polls at once: the second is early.
    expect((await Promise.all([devices.poll(view, T0 + 60_000), other.poll(view, T0 + 60_000)])).sort()).toEqual(['ok', 'slow_down']);
  });

  it('bounds the records of one client, and frees them when swept', async () => {
    const devices = actor({ ...DEVICE_FLOW_RULES, maxRecordsPerClient: 3 });
    for (let i = 0; i < 3; i++) await devices.start({ clientId: 'c1', scopes: [], audienceProjects: [] }, T0);
    await expect(devices.start({ clientId: 'c1', scopes: [], audienceProjects: [] }, T0)).rejects.toBeInstanceOf(TooManyDeviceAuthorizations);
    // Expired ones no longer count (their records stay a while for late polls): a burst holds the app up for a code's lifetime at most.
    await expect(devices.start({ clientId: 'c1', scopes: [], audienceProjects: [] }, T0 + DEVICE_FLOW_RULES.lifetimeMs)).resolves.toBeDefined();
    // Another client is not affected.
    await devices.start({ clientId: 'c2', scopes: [], audienceProjects: [] }, T0);
    expect(await devices.sweep(T0 + 15 * 60_000)).toBe(4);
    await devices.start({ clientId: 'c1', scopes: [], audienceProjects: [] }, T0 + 15 * 60_000);
  });
});
