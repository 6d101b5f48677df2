import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LoginSecurityActor } from '../../src/actors/login-security.js';
import type { Storage } from '../../src/storage/db.js';
import { openTempStorage, type TempStorage } from '../helpers/temp-storage.js';

/** Used TOTP steps and recent wrong codes are persisted: a restart neither replays a code nor resets the limit. */
let temp: TempStorage;
let storage: Storage;

beforeEach(() => {
  temp = openTempStorage('login-security');
  storage = temp.storage;
});

afterEach(async () => {
  await temp.close();
});

const reopen = async () => {
  storage = await temp.reopen();
  return new LoginSecurityActor(storage.records, 3, 60_000);
};

describe('LoginSecurityActor', () => {
  it('accepts a TOTP time step once, also after a restart', async () => {
    const actor = new LoginSecurityActor(storage.records, 3, 60_000);
    expect(await actor.passOtp('u1', 100)).toBe(true);
    expect(await actor.passOtp('u1', 100)).toBe(false);
    expect(await actor.passOtp('u1', 99)).toBe(false);
    expect(await actor.otpStepUnused('u2', 100)).toBe(true);
    const again = await reopen();
    expect(await again.otpStepUnused('u1', 100)).toBe(false);
    expect(await again.passOtp('u1', 100)).toBe(false);
    expect(await again.passOtp('u1', 101)).toBe(true);
  });

  it('parallel checks of the same code: one wins', async () => {
    const actor = new LoginSecurityActor(storage.records, 3, 60_000);
    const results = await Promise.all([actor.passOtp('u1', 7), actor.passOtp('u1', 7)]);
    expect(results.sort()).toEqual([false, true]);
  });

  it('blocks after too many wrong codes in the window, across a restart; a passed code clears them', async () => {
    const actor = new LoginSecurityActor(storage.records, 3, 60_000);
    for (const at of [1000, 2000, 3000]) await actor.takeOtpAttempt('u1', at);
    expect(await actor.otpBlocked('u1', 3000)).toBe(true);
    const again = await reopen();
    expect(await again.otpBlocked('u1', 3000)).toBe(true);
    // The oldest failure leaves the window.
    expect(await again.otpBlocked('u1', 61_001)).toBe(false);
    expect(await again.passOtp('u1', 5)).toBe(true);
    expect(await again.otpBlocked('u1', 3000)).toBe(false);
  });

  it('an enrollment uses its step up but keeps the count of wrong codes', async () => {
    const actor = new LoginSecurityActor(storage.records, 2, 60_000);
    await actor.takeOtpAttempt('u1', 1000);
    await actor.takeOtpAttempt('u1', 1000);
    expect(await actor.useOtpStepForEnrollment('u1', 9)).toBe(true);
    expect(await actor.otpStepUnused('u1', 9)).toBe(false);
    expect(await actor.otpBlocked('u1', 1000)).toBe(true);
  });

  it('the sweep forgets users with nothing left to remember', async () => {
    const actor = new LoginSecurityActor(storage.records, 3, 60_000);
    const now = 10_000_000;
    const currentStep = Math.floor(now / 1000 / 30);
    await actor.passOtp('old', currentStep - 10);
    await actor.passOtp('recent', currentStep);
    await actor.takeOtpAttempt('failing', now - 1000);
    expect(await actor.sweep(now)).toBe(1);
    expect(await actor.otpStepUnused('old', currentStep - 10)).toBe(true);
    expect(await actor.otpStepUnused('recent', currentStep)).toBe(false);
    expect(await actor.otpBlocked('failing', now)).toBe(false);
    expect(storage.stores.loginSecurity.get('failing')).toBeDefined();
  });
});

describe('LoginSecurityActor.takeOtpAttempt', () => {
  it('50 checks started at once: exactly as many as the limit get to check a code', async () => {
    const actor = new LoginSecurityActor(storage.records, 3, 60_000);
    const taken = await Promise.all(Array.from({ length: 50 }, () => actor.takeOtpAttempt('u1', 1000)));
    expect(taken.filter((t) => t !== undefined)).toHaveLength(3);
    expect(await actor.otpBlocked('u1', 1000)).toBe(true);
  });

  it('a right code takes its attempt back: passing clears the count, an enrollment removes only its own attempt', async () => {
    const actor = new LoginSecurityActor(storage.records, 3, 60_000);
    await actor.takeOtpAttempt('u1', 900);
    const attempt = await actor.takeOtpAttempt('u1', 1000);
    expect(await actor.useOtpStepForEnrollment('u1', 5, attempt)).toBe(true);
    expect(storage.stores.loginSecurity.get('u1').otpFailures).toEqual([900]);
    await actor.takeOtpAttempt('u1', 1100);
    expect(await actor.passOtp('u1', 6)).toBe(true);
    expect(storage.stores.loginSecurity.get('u1').otpFailures).toEqual([]);
  });
});
