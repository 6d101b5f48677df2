import { costProblem, isCostly } from './cost.js';
import { parseEncodedHash, type HashFormat, type ParsedHash } from './formats.js';
import { PBKDF2_MAX_ROUNDS } from './pbkdf2.js';
import { SCRYPT_MAX_MEMORY, scryptMemory } from './scrypt.js';
import { SHA_CRYPT_MAX_ROUNDS } from './sha-crypt.js';
import { verifyEncodedHash } from './verify.js';

/**
 * The password-hash registry, the one entry point for the rest of Sesame: recognise and parse a
 * format (formats.ts), bound what an import may bring (ZITADEL's bounds here, Sesame's cost limit in
 * cost.ts) and verify (verify.ts, on the password threads).
 */
export { isCostly, parseEncodedHash, verifyEncodedHash, type HashFormat, type ParsedHash };

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
