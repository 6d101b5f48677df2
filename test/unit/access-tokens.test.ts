import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ActorClaim, IssuedTokensActor } from '../../src/actors/issued-tokens.js';
import type { UserRecord } from '../../src/model/records.js';
import type { KeysActor, VerificationKey } from '../../src/actors/keys.js';
import { AccessTokens } from '../../src/services/access-tokens.js';
import { installClock } from '../../src/util/clock.js';
import { beginningAt, predatesHorizon } from '../../src/domain/revocation-horizon.js';
import { InlineSigner, type ActiveSigningKey } from '../../src/workers/signer.js';

/**
 * JWT access tokens resolve through a cache of verified tokens (src/services/access-tokens.ts):
 * a token is taken from it only while the key that signed it still verifies, only by its exact
 * text, and the claims handed out cannot be changed by whoever reads them.
 */
const ISSUER = 'http://sesame.test';

function setup() {
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const der = pair.privateKey.export({ format: 'der', type: 'pkcs8' });
  const active: ActiveSigningKey = { kid: 'k1', alg: 'ES256', privateKey: createPrivateKey(pair.privateKey.export({ format: 'pem', type: 'pkcs8' })), privateKeyDer: der };
  const verification = new Map<string, VerificationKey>([['k1', { kid: 'k1', alg: 'ES256', publicKey: pair.publicKey }]]);
  const keys = { signingKey: () => active, verificationKey: (kid: string) => verification.get(kid) } as unknown as KeysActor;
  const revokedJtis = new Set<string>();
  const issued = { isJwtRevokedOrByOrigin: async (claims: { jti: string }) => revokedJtis.has(claims.jti) } as unknown as IssuedTokensActor;
  const users = new Map<string, UserRecord>([
    ['u1', user('u1')],
    ['a1', user('a1')],
  ]);
  const tokens = new AccessTokens(ISSUER, keys, new InlineSigner(), issued, 3600, { appExists: () => true, getUser: (id) => users.get(id) });
  const issue = async (act?: ActorClaim) => (await tokens.issue('jwt', { sub: 'u1', clientId: 'c1', aud: ['p1'], scope: 'openid', ...(act ? { act } : {}) })).token;
  return { tokens, verification, issue, revokedJtis, users };
}

function user(id: string): UserRecord {
  return { id, orgId: 'o1', userName: id, state: 'USER_STATE_ACTIVE', createdAt: 0, changedAt: 0, sequence: 1 };
}

describe('verified JWT cache', () => {
  it('answers a token again from the cache, as long as its key verifies', async () => {
    const { tokens, verification, issue } = setup();
    const token = await issue();
    const first = (await tokens.resolve(token))?.claims;
    expect(first).toMatchObject({ sub: 'u1', clientId: 'c1', aud: ['p1'] });
    // The very claims verified the first time (a second verification would build new ones).
    expect((await tokens.resolve(token))?.claims).toBe(first);
    // The key leaves the verification set: the cached token goes with it.
    verification.delete('k1');
    expect(await tokens.resolve(token)).toBeUndefined();
  });

  it('checks revocation and expiry on every call, cached or not', async () => {
    const { tokens, issue, revokedJtis } = setup();
    const token = await issue();
    const { claims } = (await tokens.resolve(token))!;
    revokedJtis.add(claims.jti);
    expect(await tokens.resolve(token)).toBeUndefined();
    revokedJtis.clear();
    expect(await tokens.resolve(token)).toBeDefined();
    // Past its expiry the cached token is no longer answered.
    const restore = installClock({ now: () => (claims.exp + 1) * 1000 });
    try {
      expect(await tokens.resolve(token)).toBeUndefined();
    } finally {
      restore();
    }
  });

  it('never answers a changed token from the cache', async () => {
    const { tokens, issue } = setup();
    const token = await issue();
    expect(await tokens.resolve(token)).toBeDefined();
    const [h, p, s] = token.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: 'admin' })).toString('base64url')}.${s}`;
    expect(await tokens.resolve(forged)).toBeUndefined();
    // The second-to-last character changed (to one it is not): the signature's bytes differ.
    const flipped = `${h}.${p}.${s.slice(0, -2)}${s.at(-2) === 'A' ? 'B' : 'A'}${s.slice(-1)}`;
    expect(await tokens.resolve(flipped)).toBeUndefined();
  });

  it('hands out claims nobody can change', async () => {
    const { tokens, issue } = setup();
    const token = await issue();
    const claims = (await tokens.resolve(token))!.claims as unknown as { sub: string; aud: string[] };
    expect(() => {
      claims.sub = 'admin';
    }).toThrow(TypeError);
    expect(() => claims.aud.push('other')).toThrow(TypeError);
    expect((await tokens.resolve(token))!.claims.sub).toBe('u1');
  });

  it("voids a token once its subject's or an actor's revocation horizon passes its authentication, and when either is gone", async () => {
    const { tokens, issue, users } = setup();
    const at = 1_800_000_000_400;
    const restore = installClock({ now: () => at });
    try {
      const plain = await issue();
      const acted = await issue({ iss: ISSUER, sub: 'a1' });
      expect(await tokens.resolve(plain)).toBeDefined();
      expect(await tokens.resolve(acted)).toBeDefined();
      // A change a second before the token keeps it; one in the token's own second voids it (tokens
      // carry whole seconds, and a token minted a moment before a change must not outlive it).
      users.set('u1', { ...user('u1'), revokedBefore: at - 1000 });
      expect(await tokens.resolve(plain)).toBeDefined();
      // The actor's credentials changed a second later: the impersonation token dies, the plain one stays.
      users.set('a1', { ...user('a1'), revokedBefore: at + 1000 });
      expect(await tokens.resolve(acted)).toBeUndefined();
      expect(await tokens.resolve(plain)).toBeDefined();
      // The subject's in the token's own second: its token dies too, and stays dead whatever the state afterwards.
      users.set('u1', { ...user('u1'), revokedBefore: at });
      expect(await tokens.resolve(plain)).toBeUndefined();
      // A removed subject's token is void (an id given to a new user brings nothing back).
      users.set('u1', user('u1'));
      users.delete('a1');
      expect(await tokens.resolve(plain)).toBeDefined();
      expect(await tokens.resolve(acted)).toBeUndefined();
      users.delete('u1');
      expect(await tokens.resolve(plain)).toBeUndefined();
    } finally {
      restore();
    }
  });
});

describe('the revocation horizon (domain/revocation-horizon.ts)', () => {
  it("voids the horizon's whole second, and counts what begins in it afterwards from the next", () => {
    const at = 1_700_000_000_400;
    const changed = { ...user('u1'), revokedBefore: at };
    expect(predatesHorizon(changed, 1_700_000_000)).toBe(true);
    expect(predatesHorizon(changed, 1_699_999_999)).toBe(true);
    expect(predatesHorizon(changed, 1_700_000_001)).toBe(false);
    expect(predatesHorizon(user('u1'), 0)).toBe(false);
    expect(beginningAt(changed, at + 300)).toBe(1_700_000_001);
    expect(beginningAt(changed, at + 700)).toBe(1_700_000_001);
    expect(beginningAt(changed, at + 5000)).toBe(1_700_000_005);
    expect(beginningAt(user('u1'), at)).toBe(1_700_000_000);
  });
});
