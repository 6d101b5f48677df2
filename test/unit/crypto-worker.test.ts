import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signJwsInput } from '../../src/crypto/jws-signature.js';
import run from '../../src/workers/crypto-worker.js';

/**
 * The worker threads keep imported public keys by key id. A key id can come back with other bytes
 * (a machine key deleted and imported again under its old id): a signature must then be checked
 * against the key as it is now, never the key it replaced.
 */
const pair = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });
const spki = (key: ReturnType<typeof pair>) => key.publicKey.export({ format: 'der', type: 'spki' });

describe('crypto worker: public keys by key id', () => {
  it('checks against the key as it is now when a key id comes back with other bytes', () => {
    const before = pair();
    const after = pair();
    const input = 'header.payload';
    const signedBefore = Buffer.from(signJwsInput('ES256', before.privateKey, input), 'base64url');
    const check = (key: ReturnType<typeof pair>) => run({ op: 'verifySignatures', items: [{ keyId: 'reused-id', spkiDer: spki(key), alg: 'ES256', signingInput: input, signature: signedBefore }] });
    expect(check(before)).toEqual([true]);
    // The old key's signature no longer counts once the id names the new key.
    expect(check(after)).toEqual([false]);
    const signedAfter = Buffer.from(signJwsInput('ES256', after.privateKey, input), 'base64url');
    expect(run({ op: 'verifySignatures', items: [{ keyId: 'reused-id', spkiDer: spki(after), alg: 'ES256', signingInput: input, signature: signedAfter }] })).toEqual([true]);
  });
});
