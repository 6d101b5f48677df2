import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { IssuedTokensActor } from '../../src/actors/issued-tokens.js';
import type { KeysActor, VerificationKey } from '../../src/actors/keys.js';
import { AccessTokens } from '../../src/services/access-tokens.js';
import { installClock } from '../../src/util/clock.js';
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
  const issued = { isJwtRevoked: (jti: string) => revokedJtis.has(jti), isRevokedByOrigin: () => false } as unknown as IssuedTokensActor;
  const tokens = new AccessTokens(ISSUER, keys, new InlineSigner(), issued, 3600);
  const issue = async () => (await tokens.issue('jwt', { sub: 'u1', clientId: 'c1', aud: ['p1'], scope: 'openid' })).token;
  return { tokens, verification, issue, revokedJtis };
}

describe('verified JWT cache', () => {
  it('answers a token again from the cache, as long as its key verifies', async () => {
    const { tokens, verification, issue } = setup();
    const token = await issue();
    const first = tokens.resolve(token)?.claims;
    expect(first).toMatchObject({ sub: 'u1', clientId: 'c1', aud: ['p1'] });
    // The very claims verified the first time (a second verification would build new ones).
    expect(tokens.resolve(token)?.claims).toBe(first);
    // The key leaves the verification set: the cached token goes with it.
    verification.delete('k1');
    expect(tokens.resolve(token)).toBeUndefined();
  });

  it('checks revocation and expiry on every call, cached or not', async () => {
    const { tokens, issue, revokedJtis } = setup();
    const token = await issue();
    const { claims } = tokens.resolve(token)!;
    revokedJtis.add(claims.jti);
    expect(tokens.resolve(token)).toBeUndefined();
    revokedJtis.clear();
    expect(tokens.resolve(token)).toBeDefined();
    // Past its expiry the cached token is no longer answered.
    const restore = installClock({ now: () => (claims.exp + 1) * 1000 });
    try {
      expect(tokens.resolve(token)).toBeUndefined();
    } finally {
      restore();
    }
  });

  it('never answers a changed token from the cache', async () => {
    const { tokens, issue } = setup();
    const token = await issue();
    expect(tokens.resolve(token)).toBeDefined();
    const [h, p, s] = token.split('.') as [string, string, string];
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: 'admin' })).toString('base64url')}.${s}`;
    expect(tokens.resolve(forged)).toBeUndefined();
    // The second-to-last character changed (to one it is not): the signature's bytes differ.
    const flipped = `${h}.${p}.${s.slice(0, -2)}${s.at(-2) === 'A' ? 'B' : 'A'}${s.slice(-1)}`;
    expect(tokens.resolve(flipped)).toBeUndefined();
  });

  it('hands out claims nobody can change', async () => {
    const { tokens, issue } = setup();
    const token = await issue();
    const claims = tokens.resolve(token)!.claims as unknown as { sub: string; aud: string[] };
    expect(() => {
      claims.sub = 'admin';
    }).toThrow(TypeError);
    expect(() => claims.aud.push('other')).toThrow(TypeError);
    expect(tokens.resolve(token)!.claims.sub).toBe('u1');
  });
});
