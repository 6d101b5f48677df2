import { describe, expect, it } from 'vitest';
import { rowEvents } from '../../src/model/row-events.js';
import type { AppRecord, UserRecord } from '../../src/model/records.js';

/** The one rule that says which events a directory row's change stands for (model/row-events.ts). */
const meta = { createdAt: 1, changedAt: 1, sequence: 1 };
const person: UserRecord = {
  ...meta,
  id: 'u1',
  orgId: 'o1',
  userName: 'ada',
  state: 'USER_STATE_ACTIVE',
  human: {
    profile: { firstName: 'Ada', lastName: 'L', nickName: '', displayName: 'Ada L', preferredLanguage: 'en', gender: '' },
    email: { email: 'ada@example.com', isEmailVerified: false },
    passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaA',
    passwordChangeRequired: false,
    failedPasswordAttempts: 0,
  },
};
const types = (before: unknown, after: unknown, store = 'users') => rowEvents(store, 'u1', before, after).map((e) => e.type);

describe('row events', () => {
  it('names a person added, removed and each change of state', () => {
    expect(types(undefined, person)).toEqual(['user.human.added']);
    expect(types(person, null)).toEqual(['user.removed']);
    expect(types(person, { ...person, state: 'USER_STATE_LOCKED' })).toEqual(['user.locked']);
    expect(types({ ...person, state: 'USER_STATE_LOCKED' }, person)).toEqual(['user.unlocked']);
    expect(types(person, { ...person, state: 'USER_STATE_INACTIVE' })).toEqual(['user.deactivated']);
    expect(types({ ...person, state: 'USER_STATE_INACTIVE' }, person)).toEqual(['user.reactivated']);
    expect(types({ ...person, state: 'USER_STATE_INITIAL' }, person)).toEqual(['user.human.initialization.check.succeeded']);
  });

  it('names credential and contact changes without their values where they are secrets', () => {
    const changed = rowEvents('users', 'u1', person, {
      ...person,
      revokedBefore: 5,
      human: { ...person.human!, passwordHash: '$argon2id$other', email: { email: 'new@example.com', isEmailVerified: true } },
    });
    expect(changed.map((e) => e.type)).toEqual(['user.human.email.changed', 'user.human.email.verified', 'user.human.password.changed']);
    expect(JSON.stringify(changed)).not.toContain('argon2');
    expect(changed[0]!.payload).toEqual({ email: 'new@example.com' });
    // The same address or number, no longer verified: an event of its own (it signs nobody in now).
    const verifiedPerson = { ...person, human: { ...person.human!, email: { ...person.human!.email, isEmailVerified: true }, phone: { phone: '+41791234567', isPhoneVerified: true } } };
    const unverified = {
      ...verifiedPerson,
      human: { ...verifiedPerson.human, email: { ...verifiedPerson.human.email, isEmailVerified: false }, phone: { phone: '+41791234567', isPhoneVerified: false } },
    };
    expect(types(verifiedPerson, unverified)).toEqual(['user.human.email.unverified', 'user.human.phone.unverified']);
    expect(types(verifiedPerson, { ...unverified, human: { ...unverified.human, email: { email: 'moved@example.com', isEmailVerified: false }, phone: undefined } })).toEqual([
      'user.human.email.changed',
      'user.human.phone.removed',
    ]);
    const otp = rowEvents('users', 'u1', person, { ...person, human: { ...person.human!, otpSecretSealed: new Uint8Array([1, 2, 3]) } });
    expect(otp.map((e) => e.type)).toEqual(['user.human.mfa.otp.added']);
    expect(JSON.stringify(otp)).not.toMatch(/"1"|\[1,2,3\]/);
  });

  it('tells a password hashed anew at a sign-in (no new password: nothing voided) from a new password', () => {
    const rehashed = { ...person, human: { ...person.human!, passwordHash: '$argon2id$v=19$m=65536,t=3,p=4$stronger' } };
    expect(types(person, rehashed)).toEqual(['user.human.password.hash.updated']);
    expect(types(person, { ...rehashed, revokedBefore: 9 })).toEqual(['user.human.password.changed']);
  });

  it('names a failed check, and says nothing of a reset failure count or of a row written unchanged', () => {
    const failed = { ...person, human: { ...person.human!, failedPasswordAttempts: 1 } };
    expect(types(person, failed)).toEqual(['user.human.password.check.failed']);
    expect(types(failed, person)).toEqual([]);
    expect(types(person, { ...person, changedAt: 2, sequence: 2 })).toEqual([]);
  });

  it('names passkeys and links added and removed, with the token or provider as the object', () => {
    const token = { id: 'cred', tokenId: 't1', publicKey: new Uint8Array([9]), counter: 0, name: 'Laptop', kind: 'passwordless' as const, createdAt: 1 };
    const withKey = { ...person, human: { ...person.human!, webauthn: [token], idpLinks: [{ idpId: 'idp1', externalUserId: 'x', userName: 'ada@idp' }] } };
    const added = rowEvents('users', 'u1', person, withKey);
    expect(added.map((e) => [e.type, e.objectId])).toEqual([
      ['user.human.passwordless.token.added', 't1'],
      ['user.human.externalidp.added', 'idp1'],
    ]);
    expect(types(withKey, person)).toEqual(['user.human.passwordless.token.removed', 'user.human.externalidp.removed']);
  });

  it('puts an app under its project, with the app as the object, and a new secret without its hash', () => {
    const app: AppRecord = { ...meta, id: 'a1', projectId: 'p1', orgId: 'o1', name: 'web', state: 'APP_STATE_ACTIVE', clientId: 'c1', secretHash: new Uint8Array([1]) };
    const [added] = rowEvents('apps', 'a1', undefined, app);
    expect(added).toMatchObject({ type: 'project.application.added', aggregateType: 'project', aggregateId: 'p1', objectId: 'a1', resourceOwner: 'o1' });
    expect(types(app, { ...app, secretHash: new Uint8Array([2]) }, 'apps')).toEqual(['project.application.config.secret.changed']);
  });

  it('names the instance settings that changed, and nothing for the store bookkeeping', () => {
    expect(rowEvents('meta', 'securityPolicy', { enableImpersonation: false, ...meta }, { enableImpersonation: true, ...meta })).toEqual([
      { type: 'instance.policy.security.changed', aggregateType: 'instance', aggregateId: '', resourceOwner: '', payload: { changed: ['enableImpersonation'] } },
    ]);
    expect(rowEvents('meta', 'uniqueKeysBuilt', undefined, 2)).toEqual([]);
    expect(rowEvents('meta', 'signingKeySet', { sequence: 1 }, { sequence: 2 })).toEqual([]);
  });
});
