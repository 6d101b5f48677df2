import type { KeyObject } from 'node:crypto';
import { importSpki, verifyJwsSignature } from '../crypto/jws-signature.js';
import { importPublicJwk } from '../crypto/jwk-public-key.js';
import type { SignatureItem, VerifyJwkSignatureItem } from './tasks.js';

/**
 * Keys from requests (DPoP proofs) kept imported, by thumbprint: a client signs its proofs with one
 * key for a long time. Bounded, since anyone may send a proof with a key of their own: the one
 * imported longest ago leaves first.
 */
const REQUEST_KEYS_KEPT = 1024;

/**
 * Checks a JWS signature against a public key kept by key id, on the calling thread: the crypto
 * workers do it in batches for the main thread, and an HTTP acceptor thread (which has no pool)
 * does it inline. A key id can come back with other bytes (a machine key deleted and imported
 * again under its old id), and a signature is then checked against the key as it is now.
 */
export class SignatureCheck {
  private readonly publicKeys = new Map<string, { spkiDer: Uint8Array; key: KeyObject }>();
  private readonly requestKeys = new Map<string, KeyObject | undefined>();

  check(item: SignatureItem): boolean {
    if ('jwk' in item) return this.checkWithJwk(item);
    let known = this.publicKeys.get(item.keyId);
    if (!known || Buffer.compare(known.spkiDer, item.spkiDer) !== 0) {
      known = { spkiDer: item.spkiDer, key: importSpki(item.spkiDer) };
      this.publicKeys.set(item.keyId, known);
    }
    return verifyJwsSignature(item.alg, known.key, item.signingInput, item.signature);
  }

  /** A key that does not import (off its curve, not for the algorithm) verifies nothing: false, never a failed batch. */
  private checkWithJwk(item: VerifyJwkSignatureItem): boolean {
    let key = this.requestKeys.get(item.keyId);
    if (key === undefined && !this.requestKeys.has(item.keyId)) {
      key = importPublicJwk(item.jwk, item.alg);
      if (this.requestKeys.size >= REQUEST_KEYS_KEPT) this.requestKeys.delete(this.requestKeys.keys().next().value!);
      this.requestKeys.set(item.keyId, key);
    }
    if (!key) return false;
    try {
      return verifyJwsSignature(item.alg, key, item.signingInput, item.signature);
    } catch {
      return false;
    }
  }

  /** The same check as a promise, where a pool's `verifySignature` is expected. */
  verifySignature(item: SignatureItem): Promise<boolean> {
    try {
      return Promise.resolve(this.check(item));
    } catch (error) {
      return Promise.reject(error);
    }
  }
}
