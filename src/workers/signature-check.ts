import type { KeyObject } from 'node:crypto';
import { importSpki, verifyJwsSignature } from '../crypto/jws-signature.js';
import type { VerifySignatureItem } from './tasks.js';

/**
 * Checks a JWS signature against a public key kept by key id, on the calling thread: the crypto
 * workers do it in batches for the main thread, and an HTTP acceptor thread (which has no pool)
 * does it inline. A key id can come back with other bytes (a machine key deleted and imported
 * again under its old id), and a signature is then checked against the key as it is now.
 */
export class SignatureCheck {
  private readonly publicKeys = new Map<string, { spkiDer: Uint8Array; key: KeyObject }>();

  check(item: VerifySignatureItem): boolean {
    let known = this.publicKeys.get(item.keyId);
    if (!known || Buffer.compare(known.spkiDer, item.spkiDer) !== 0) {
      known = { spkiDer: item.spkiDer, key: importSpki(item.spkiDer) };
      this.publicKeys.set(item.keyId, known);
    }
    return verifyJwsSignature(item.alg, known.key, item.signingInput, item.signature);
  }

  /** The same check as a promise, where a pool's `verifySignature` is expected. */
  verifySignature(item: VerifySignatureItem): Promise<boolean> {
    try {
      return Promise.resolve(this.check(item));
    } catch (error) {
      return Promise.reject(error);
    }
  }
}
