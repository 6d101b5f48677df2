import { createHash, timingSafeEqual } from 'node:crypto';
import { verifySync as argon2Verify } from '@node-rs/argon2';
import bcrypt from 'bcryptjs';
import { md5Crypt, parseMd5Crypt } from './md5-crypt.js';
import { parsePbkdf2, verifyPbkdf2 } from './pbkdf2.js';
import { parseScrypt, verifyScrypt } from './scrypt.js';
import { parseShaCrypt, SHA_CRYPT_MAX_ROUNDS, shaCrypt } from './sha-crypt.js';

/**
 * Verifies a password against an encoded hash in any format Sesame imports (compat §1.3): argon2
 * (PHC), bcrypt, scrypt (passlib and `$7$`), PBKDF2 (passlib and Keycloak), SHA-256/512-crypt and
 * md5crypt. Pure and synchronous: it runs inside the crypto worker pool, never on the event loop.
 */
export type VerifyOutcome = 'ok' | 'mismatch' | 'unsupported';

export type HashFormat = 'argon2' | 'bcrypt' | 'scrypt' | 'pbkdf2' | 'sha-crypt' | 'md5crypt';

/** The format an encoded hash claims by its prefix, or undefined when none is known. */
export function hashFormatOf(encoded: string): HashFormat | undefined {
  if (encoded.startsWith('$argon2')) return 'argon2';
  if (/^\$2[aby]\$/.test(encoded)) return 'bcrypt';
  if (encoded.startsWith('$scrypt$') || encoded.startsWith('$7$')) return 'scrypt';
  if (encoded.startsWith('$pbkdf2')) return 'pbkdf2';
  if (/^\$[56]\$/.test(encoded)) return 'sha-crypt';
  if (encoded.startsWith('$1$')) return 'md5crypt';
  return undefined;
}

function sameText(a: string, b: string): boolean {
  // Hash both so the comparison is constant-time whatever the lengths.
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db);
}

const BCRYPT_MAX_COST = 16;
const BCRYPT = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/;

export function verifyEncodedHash(password: string, encoded: string): VerifyOutcome {
  try {
    switch (hashFormatOf(encoded)) {
      case 'argon2':
        return argon2Verify(encoded, password) ? 'ok' : 'mismatch';
      case 'bcrypt': {
        const m = BCRYPT.exec(encoded);
        if (!m || Number(m[1]) > BCRYPT_MAX_COST) return 'unsupported';
        // bcryptjs reads $2a$/$2b$ natively; $2y$ (PHP) is the same algorithm.
        return bcrypt.compareSync(password, encoded.replace(/^\$2y\$/, '$2b$')) ? 'ok' : 'mismatch';
      }
      case 'scrypt': {
        const params = parseScrypt(encoded);
        if (!params) return 'unsupported';
        return verifyScrypt(password, encoded, params) ? 'ok' : 'mismatch';
      }
      case 'pbkdf2': {
        const params = parsePbkdf2(encoded);
        if (!params) return 'unsupported';
        return verifyPbkdf2(password, params) ? 'ok' : 'mismatch';
      }
      case 'sha-crypt': {
        const setting = parseShaCrypt(encoded);
        if (!setting || (setting.rounds ?? 0) > SHA_CRYPT_MAX_ROUNDS) return 'unsupported';
        const expectedLength = setting.variant === '5' ? 43 : 86;
        if (setting.hash.length !== expectedLength) return 'unsupported';
        const computed = shaCrypt(password, setting);
        return sameText(computed.slice(computed.lastIndexOf('$') + 1), setting.hash) ? 'ok' : 'mismatch';
      }
      case 'md5crypt': {
        const parsed = parseMd5Crypt(encoded);
        if (!parsed) return 'unsupported';
        const computed = md5Crypt(password, parsed.salt);
        return sameText(computed.slice(computed.lastIndexOf('$') + 1), parsed.hash) ? 'ok' : 'mismatch';
      }
      default:
        return 'unsupported';
    }
  } catch {
    // Malformed parameters (bad base64, out-of-range costs) are a format problem, not a mismatch.
    return 'unsupported';
  }
}
