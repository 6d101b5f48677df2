import { createHash, timingSafeEqual } from 'node:crypto';
import { verifySync as argon2Verify } from '@node-rs/argon2';
import bcrypt from 'bcryptjs';
import { costProblem, passwordTooLongFor } from './cost.js';
import { parseEncodedHash } from './formats.js';
import { md5Crypt } from './md5-crypt.js';
import { verifyPbkdf2 } from './pbkdf2.js';
import { verifyScrypt } from './scrypt.js';
import { shaCrypt } from './sha-crypt.js';

/**
 * Verifies a password against an encoded hash in any format Sesame imports (src/crypto/passwords/formats.ts).
 * Pure and synchronous: it runs inside the password worker pool, never on the event loop.
 */
export type VerifyOutcome = 'ok' | 'mismatch' | 'unsupported';

function sameText(a: string, b: string): boolean {
  // Hash both so the comparison is constant-time whatever the lengths.
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db);
}

export function verifyEncodedHash(password: string, encoded: string): VerifyOutcome {
  const hash = parseEncodedHash(encoded);
  // The import refuses costlier hashes; one stored before that rule is not verified either.
  if (!hash || costProblem(hash)) return 'unsupported';
  if (passwordTooLongFor(hash, password)) return 'mismatch';
  try {
    switch (hash.format) {
      case 'argon2':
        return argon2Verify(encoded, password) ? 'ok' : 'mismatch';
      case 'bcrypt':
        // bcryptjs reads $2a$/$2b$ natively; $2y$ (PHP) is the same algorithm.
        return bcrypt.compareSync(password, encoded.replace(/^\$2y\$/, '$2b$')) ? 'ok' : 'mismatch';
      case 'scrypt':
        return verifyScrypt(password, encoded, hash.params) ? 'ok' : 'mismatch';
      case 'pbkdf2':
        return verifyPbkdf2(password, hash.params) ? 'ok' : 'mismatch';
      case 'sha-crypt': {
        const computed = shaCrypt(password, hash.setting);
        return sameText(computed.slice(computed.lastIndexOf('$') + 1), hash.setting.hash) ? 'ok' : 'mismatch';
      }
      case 'md5crypt': {
        const computed = md5Crypt(password, hash.salt);
        return sameText(computed.slice(computed.lastIndexOf('$') + 1), hash.hash) ? 'ok' : 'mismatch';
      }
    }
  } catch {
    // Malformed parameters (bad base64, out-of-range costs) are a format problem, not a mismatch.
    return 'unsupported';
  }
}
