import { createPublicKey, type KeyObject } from 'node:crypto';
import type { SigningAlg } from '../config.js';

/**
 * Imports a public JWK (a DPoP proof's header key) for one algorithm: undefined when node:crypto
 * refuses it (a point off its curve, a malformed modulus) or it is not a key for `alg` (RSA under
 * 2048 bits, another curve). Never throws: the key comes from a request.
 */
export function importPublicJwk(jwk: Readonly<Record<string, string>>, alg: SigningAlg): KeyObject | undefined {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: { ...jwk }, format: 'jwk' });
  } catch {
    return undefined;
  }
  switch (alg) {
    case 'RS256':
      return key.asymmetricKeyType === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048 ? key : undefined;
    case 'ES256':
      return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1' ? key : undefined;
    case 'EdDSA':
      return key.asymmetricKeyType === 'ed25519' ? key : undefined;
  }
}
