import { createHash } from 'node:crypto';
import type { SigningAlg } from '../config.js';

/**
 * `at_hash` (OIDC Core §3.1.3.6, §3.2.2.10): the left half of the hash of the access token's
 * ASCII octets, base64url. The hash is the one of the ID token's signature algorithm: SHA-256
 * for RS256/ES256; for EdDSA with Ed25519, SHA-512 (OpenID Connect Core errata / RFC 8037 usage).
 */
export function atHash(accessToken: string, alg: SigningAlg): string {
  const digest = createHash(alg === 'EdDSA' ? 'sha512' : 'sha256')
    .update(accessToken, 'ascii')
    .digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}
