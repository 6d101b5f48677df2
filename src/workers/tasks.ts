import type { SigningAlg } from '../config.js';

/** Messages the main thread sends to the crypto workers. */
export interface SignBatchTask {
  op: 'signBatch';
  kid: string;
  alg: SigningAlg;
  /** PKCS#8 DER of the private key; the worker imports it once per kid and caches it. */
  keyDer: Uint8Array;
  inputs: string[];
}

export interface HashPasswordTask {
  op: 'hashPassword';
  password: string;
}

export interface VerifyPasswordTask {
  op: 'verifyPassword';
  password: string;
  encodedHash: string;
}

/** One JWS signature to check with a registered public key (client and JWT profile assertions). */
export interface VerifySignatureItem {
  /** Cache key of the public key in the worker (the key id). */
  keyId: string;
  /** SPKI DER of the public key. */
  spkiDer: Uint8Array;
  alg: 'RS256' | 'ES256' | 'EdDSA';
  signingInput: string;
  signature: Uint8Array;
}

/**
 * One JWS signature to check with a key the request itself carries (a DPoP proof's `jwk`),
 * reduced to its thumbprint's members; `keyId` is that thumbprint, so one id always names one key.
 */
export interface VerifyJwkSignatureItem {
  keyId: string;
  jwk: Readonly<Record<string, string>>;
  alg: 'RS256' | 'ES256' | 'EdDSA';
  signingInput: string;
  signature: Uint8Array;
}

export type SignatureItem = VerifySignatureItem | VerifyJwkSignatureItem;

export interface VerifySignaturesTask {
  op: 'verifySignatures';
  items: SignatureItem[];
}

export type CryptoTask = SignBatchTask | HashPasswordTask | VerifyPasswordTask | VerifySignaturesTask;

export interface VerifyPasswordResult {
  ok: boolean;
  /** Set when the hash format is not one this build can verify. */
  unsupported?: boolean;
  /**
   * Set on a match when the stored hash is not Sesame's own argon2id (an imported bcrypt, scrypt,
   * pbkdf2, … hash, or older parameters): the caller hashes the password again and stores it with
   * `OrgsActor.recordPasswordSuccess(userId, rehashed)`.
   */
  needsRehash?: boolean;
}
