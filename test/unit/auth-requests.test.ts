import { afterEach, describe, expect, it } from 'vitest';
import { AuthRequestsActor, AUTH_REQUEST_LIFETIME_MS } from '../../src/actors/auth-requests.js';
import type { ValidatedAuthRequest } from '../../src/oauth/authorize/validate.js';
import { installClock } from '../../src/util/clock.js';

/** The login moves an auth request on only through the actor's transitions. */
const request = { clientId: 'app' } as unknown as ValidatedAuthRequest;

describe('AuthRequestsActor transitions', () => {
  let restore: (() => void) | undefined;
  afterEach(() => restore?.());

  it('choose user → pass password → fail and pass TOTP → finish', () => {
    const actor = new AuthRequestsActor();
    const auth = actor.create('agent', request, 'en', 'loginname');
    actor.chooseUser(auth, 'alice@org.example', 'u1');
    expect(auth).toMatchObject({ step: 'password', loginName: 'alice@org.example', userId: 'u1', checks: {}, otpFailures: 0 });
    expect(auth.authenticatedUserId).toBeUndefined();
    actor.passPassword(auth, 'u1', 100);
    expect(auth).toMatchObject({ userId: 'u1', authenticatedUserId: 'u1', checks: { passwordAt: 100 } });
    actor.enterStep(auth, 'otp');
    expect(auth.step).toBe('otp');
    expect(actor.failOtp(auth)).toBe(1);
    expect(actor.failOtp(auth)).toBe(2);
    actor.passOtp(auth, 130);
    expect(auth.checks).toEqual({ passwordAt: 100, secondFactorAt: 130 });
    actor.finish(auth.id);
    expect(actor.get(auth.id, 'agent')).toBeUndefined();
  });

  it('back to the login name forgets what was passed; the typed name stays', () => {
    const actor = new AuthRequestsActor();
    const auth = actor.create('agent', request, 'en', 'loginname');
    actor.chooseUser(auth, 'alice', 'u1');
    actor.passPassword(auth, 'u1', 100);
    actor.enterStep(auth, 'mfa-setup');
    expect(auth.pendingOtpSecret).toMatch(/^[A-Z2-7]+$/);
    actor.backToLoginName(auth);
    expect(auth).toMatchObject({ step: 'loginname', loginName: 'alice', checks: {} });
    expect(auth.userId).toBeUndefined();
    expect(auth.authenticatedUserId).toBeUndefined();
    expect(auth.pendingOtpSecret).toBeUndefined();
  });

  it('a new user chosen does not inherit checks; entering a step resets its TOTP failures and secret', () => {
    const actor = new AuthRequestsActor();
    const auth = actor.create('agent', request, 'en', 'password', { userId: 'u1', checks: { passwordAt: 5 } });
    expect(auth.authenticatedUserId).toBe('u1');
    actor.enterStep(auth, 'mfa-setup');
    const first = auth.pendingOtpSecret;
    actor.failOtp(auth);
    actor.enterStep(auth, 'mfa-setup');
    expect(auth.otpFailures).toBe(0);
    expect(auth.pendingOtpSecret).not.toBe(first);
    actor.leaveOtpSetup(auth);
    expect(auth.pendingOtpSecret).toBeUndefined();
    actor.chooseUser(auth, 'bob', 'u2');
    expect(auth.checks).toEqual({});
    expect(auth.authenticatedUserId).toBeUndefined();
  });

  it('resumes a browser session with the checks it still vouches for', () => {
    const actor = new AuthRequestsActor();
    const auth = actor.create('agent', request, 'en', 'select');
    actor.resumeSession(auth, 'otp', 'u1', { passwordAt: 7 });
    expect(auth).toMatchObject({ step: 'otp', userId: 'u1', authenticatedUserId: 'u1', checks: { passwordAt: 7 } });
    actor.resumeSession(auth, 'password', 'u2', undefined);
    expect(auth).toMatchObject({ step: 'password', userId: 'u2', checks: {} });
    expect(auth.authenticatedUserId).toBeUndefined();
    actor.offerLoginName(auth);
    expect(auth.step).toBe('loginname');
    actor.startRegistration(auth);
    expect(auth.step).toBe('register');
  });

  it('a request is bound to its agent until rebound, and expires', () => {
    let now = 1_000_000;
    restore = installClock({ now: () => now });
    const actor = new AuthRequestsActor();
    const auth = actor.create('agent', request, 'en', 'loginname');
    expect(actor.get(auth.id, 'other')).toBeUndefined();
    actor.rebind(auth, 'renewed');
    expect(actor.get(auth.id, 'agent')).toBeUndefined();
    expect(actor.get(auth.id, 'renewed')?.cookieRenewed).toBe(true);
    now += AUTH_REQUEST_LIFETIME_MS;
    expect(actor.get(auth.id, 'renewed')).toBeUndefined();
  });

  it('views are read-only (a type error to change them)', () => {
    const actor = new AuthRequestsActor();
    const auth = actor.create('agent', request, 'en', 'loginname');
    // @ts-expect-error changed only through transitions
    auth.userId = 'u1';
    // @ts-expect-error deep
    auth.checks.passwordAt = 1;
    expect(auth).toBeDefined();
  });
});
