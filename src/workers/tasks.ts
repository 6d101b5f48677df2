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

export type CryptoTask = SignBatchTask | HashPasswordTask | VerifyPasswordTask;

export interface VerifyPasswordResult {
  ok: boolean;
  /** Set when the hash format is not one this build can verify. */
  unsupported?: boolean;
}
