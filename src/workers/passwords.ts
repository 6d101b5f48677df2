import { hashSync, verifySync, Algorithm } from '@node-rs/argon2';
import type { VerifyPasswordResult } from './tasks.js';

/**
 * Password hashing: argon2id with OWASP's recommended parameters (19 MiB, t=2, p=1). Runs in the
 * worker pool, never on the event loop.
 */
export function hashPassword(password: string): string {
  return hashSync(password, { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 });
}

export function verifyPassword(password: string, encodedHash: string): VerifyPasswordResult {
  if (encodedHash.startsWith('$argon2')) {
    try {
      return { ok: verifySync(encodedHash, password) };
    } catch {
      return { ok: false, unsupported: true };
    }
  }
  return { ok: false, unsupported: true };
}

/** True when a stored hash should be replaced by Sesame's own hasher after a successful login. */
export function needsRehash(encodedHash: string): boolean {
  return !encodedHash.startsWith('$argon2id$v=19$m=19456,t=2,p=1$');
}
