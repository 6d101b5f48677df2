import { parseMd5Crypt } from './md5-crypt.js';
import { parsePbkdf2, type Pbkdf2Params } from './pbkdf2.js';
import { parseScrypt, type ScryptParams } from './scrypt.js';
import { parseShaCrypt, type ShaCryptSetting } from './sha-crypt.js';

/**
 * The encoded password hashes Sesame reads (docs/compatibility.md §1.3): one parser for import and verification,
 * so what is accepted at import is exactly what can be verified at sign-in. Argon2 (PHC), bcrypt,
 * scrypt (passlib and `$7$`), PBKDF2 (passlib and Keycloak), SHA-256/512-crypt and md5crypt.
 */
export type ParsedHash =
  | { format: 'argon2'; m: number; t: number; p: number }
  | { format: 'bcrypt'; cost: number }
  | { format: 'scrypt'; params: ScryptParams }
  | { format: 'pbkdf2'; params: Pbkdf2Params }
  | { format: 'sha-crypt'; setting: ShaCryptSetting & { hash: string } }
  | { format: 'md5crypt'; salt: string; hash: string };

export type HashFormat = ParsedHash['format'];

const B64 = '[A-Za-z0-9+/.]+={0,2}';
const ARGON2 = new RegExp(`^\\$argon2(?:id|i|d)\\$(?:v=\\d+\\$)?m=(\\d{1,10}),t=(\\d{1,10}),p=(\\d{1,3})\\$${B64}\\$${B64}$`);
const BCRYPT = /^\$2[aby]\$(\d{2})\$[./A-Za-z0-9]{53}$/;

/** The hash's format and parameters, or undefined when it is in no form Sesame reads. */
export function parseEncodedHash(encoded: string): ParsedHash | undefined {
  if (encoded.startsWith('$argon2')) {
    const m = ARGON2.exec(encoded);
    return m ? { format: 'argon2', m: Number(m[1]), t: Number(m[2]), p: Number(m[3]) } : undefined;
  }
  if (encoded.startsWith('$2')) {
    const m = BCRYPT.exec(encoded);
    return m ? { format: 'bcrypt', cost: Number(m[1]) } : undefined;
  }
  if (encoded.startsWith('$scrypt$') || encoded.startsWith('$7$')) {
    const params = parseScrypt(encoded);
    return params ? { format: 'scrypt', params } : undefined;
  }
  if (encoded.startsWith('$pbkdf2')) {
    const params = parsePbkdf2(encoded);
    return params ? { format: 'pbkdf2', params } : undefined;
  }
  if (encoded.startsWith('$5$') || encoded.startsWith('$6$')) {
    const setting = parseShaCrypt(encoded);
    if (!setting || setting.hash.length !== (setting.variant === '5' ? 43 : 86)) return undefined;
    return { format: 'sha-crypt', setting };
  }
  if (encoded.startsWith('$1$')) {
    const parsed = parseMd5Crypt(encoded);
    return parsed ? { format: 'md5crypt', ...parsed } : undefined;
  }
  return undefined;
}
