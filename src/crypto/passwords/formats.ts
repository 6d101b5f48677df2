import { PBKDF2_MAX_ROUNDS } from './pbkdf2.js';
import { SHA_CRYPT_MAX_ROUNDS } from './sha-crypt.js';
import { costProblem } from './cost.js';
import { parseMd5Crypt } from './md5-crypt.js';
import { parsePbkdf2, type Pbkdf2Params } from './pbkdf2.js';
import { parseScrypt, SCRYPT_MAX_MEMORY, scryptMemory, type ScryptParams } from './scrypt.js';
import { parseShaCrypt, type ShaCryptSetting } from './sha-crypt.js';

/**
 * The encoded password hashes Sesame reads (compat §1.3): one parser for import and verification,
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

const within = (value: number, min: number, max: number) => value >= min && value <= max;

/** The cost bounds ZITADEL's passwap verifiers enforce, checked at import (undefined when in bounds). */
function zitadelBoundsProblem(hash: ParsedHash): string | undefined {
  switch (hash.format) {
    case 'argon2':
      return within(hash.m, 8192, 524288) && within(hash.t, 1, 10) && within(hash.p, 1, 16) ? undefined : 'argon2 m 8192-524288, t 1-10, p 1-16';
    case 'bcrypt':
      return within(hash.cost, 10, 16) ? undefined : 'bcrypt cost 10-16';
    case 'scrypt': {
      const { ln, r, p } = hash.params;
      if (!within(ln, 14, 20) || !within(r, 8, 32) || !within(p, 1, 16)) return 'scrypt ln 14-20, r 8-32, p 1-16';
      return scryptMemory(ln, r) > SCRYPT_MAX_MEMORY ? 'scrypt memory 128·N·r at most 1 GiB' : undefined;
    }
    case 'pbkdf2':
      return within(hash.params.rounds, 1000, PBKDF2_MAX_ROUNDS) ? undefined : `pbkdf2 rounds 1000-${PBKDF2_MAX_ROUNDS}`;
    case 'sha-crypt':
      return hash.setting.rounds === undefined || within(hash.setting.rounds, 1000, SHA_CRYPT_MAX_ROUNDS) ? undefined : `sha2 rounds 1000-${SHA_CRYPT_MAX_ROUNDS}`;
    case 'md5crypt':
      return undefined;
  }
}

/** Why a hash cannot be imported: not a format Sesame reads, outside ZITADEL's bounds, or too costly to verify. */
export type ImportProblem = { kind: 'unsupported' } | { kind: 'bounds' | 'cost'; format: HashFormat; reason: string };

export function importProblem(encoded: string): ImportProblem | undefined {
  const hash = parseEncodedHash(encoded);
  if (!hash) return { kind: 'unsupported' };
  const bounds = zitadelBoundsProblem(hash);
  if (bounds) return { kind: 'bounds', format: hash.format, reason: bounds };
  const cost = costProblem(hash);
  return cost ? { kind: 'cost', format: hash.format, reason: cost } : undefined;
}
