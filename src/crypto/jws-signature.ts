import { createPrivateKey, createPublicKey, sign as cryptoSign, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import type { SigningAlg } from '../config.js';

/**
 * JWS signing with node:crypto (2-3x faster than jose's async path). Used both inline on the
 * main thread and inside the worker pool.
 */
export function signJwsInput(alg: SigningAlg, key: KeyObject, signingInput: string): string {
  switch (alg) {
    case 'RS256':
      return cryptoSign('sha256', Buffer.from(signingInput), key).toString('base64url');
    case 'ES256':
      return cryptoSign('sha256', Buffer.from(signingInput), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url');
    case 'EdDSA':
      return cryptoSign(null, Buffer.from(signingInput), key).toString('base64url');
  }
}

export function importPkcs8(der: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.from(der), format: 'der', type: 'pkcs8' });
}

/** Checks a JWS signature with node:crypto; used inline for Sesame's own tokens and in the pool for assertions. */
export function verifyJwsSignature(alg: SigningAlg, key: KeyObject, signingInput: string, signature: Uint8Array): boolean {
  const data = Buffer.from(signingInput);
  switch (alg) {
    case 'RS256':
      return cryptoVerify('sha256', data, key, signature);
    case 'ES256':
      return cryptoVerify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature);
    case 'EdDSA':
      return cryptoVerify(null, data, key, signature);
  }
}

export function importSpki(der: Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.from(der), format: 'der', type: 'spki' });
}
