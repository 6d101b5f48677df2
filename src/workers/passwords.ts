import { hashSync } from '@node-rs/argon2';
import { ARGON2 } from './argon2-algorithms.js';
import { verifyEncodedHash } from '../crypto/passwords/registry.js';
import type { VerifyPasswordResult } from './tasks.js';

/**
 * Password hashing: argon2id with OWASP's recommended parameters (19 MiB, t=2, p=1). Runs in the
 * worker pool, never on the event loop. Verification reads every imported format (see
 * src/crypto/passwords/verify.ts); a match on anything but Sesame's own parameters asks for a rehash.
 */
const SESAME_ARGON2ID_PREFIX = '$argon2id$v=19$m=19456,t=2,p=1$';

export function hashPassword(password: string): string {
  return hashSync(password, { algorithm: ARGON2.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 });
}

export function verifyPassword(password: string, encodedHash: string): VerifyPasswordResult {
  const outcome = verifyEncodedHash(password, encodedHash);
  if (outcome === 'unsupported') return { ok: false, unsupported: true };
  if (outcome === 'mismatch') return { ok: false };
  return needsRehash(encodedHash) ? { ok: true, needsRehash: true } : { ok: true };
}

/** True when a stored hash should be replaced by Sesame's own hasher after a successful login. */
export function needsRehash(encodedHash: string): boolean {
  return !encodedHash.startsWith(SESAME_ARGON2ID_PREFIX);
}
