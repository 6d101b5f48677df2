import type { ParsedHash } from './formats.js';

/**
 * What one password verification costs, estimated from the hash's parameters, and the most Sesame
 * spends on one. An imported hash is attacker-controlled (an admin import, a migrated database):
 * `$6$rounds=999999999$…` alone keeps a worker thread busy for over half an hour per sign-in
 * attempt. Hashes estimated above the limit are refused at import and never verified.
 *
 * Constants measured on the reference machine (2 cores) with `node bench/password-cost.mjs` (best of
 * a few runs of each primitive, rounded up). They are estimates: a faster machine gets headroom.
 *
 * The limit lets ZITADEL's default hasher through (bcrypt cost 14: 1.26 s in bcryptjs here), so a
 * ZITADEL export imports as it is; everything more expensive is refused.
 */
export const MAX_VERIFY_MS = 1500;

/** µs per round of SHA-crypt: 1.56 (SHA-256) and 2.03 (SHA-512) measured. */
const SHA_CRYPT_US_PER_ROUND = { '5': 1.6, '6': 2.1 } as const;
/** md5crypt has a fixed 1000 rounds: 1.7 ms measured. */
const MD5_CRYPT_MS = 2;
/**
 * ns per PBKDF2 iteration per output block of the digest's size (node:crypto, OpenSSL): sha1 236,
 * sha256 223, sha512 596 measured. PBKDF2 runs once per block of output, so a long stored hash
 * multiplies the cost.
 */
const PBKDF2_NS_PER_BLOCK: Record<string, { ns: number; blockBytes: number }> = {
  sha1: { ns: 250, blockBytes: 20 },
  sha224: { ns: 240, blockBytes: 28 },
  sha256: { ns: 240, blockBytes: 32 },
  sha384: { ns: 620, blockBytes: 48 },
  sha512: { ns: 620, blockBytes: 64 },
};
/** ns per unit of N·r·p (node:crypto scrypt): 315-362 measured from ln=14 to ln=18 at r=8. */
const SCRYPT_NS_PER_NRP = 370;
/** bcryptjs (pure JS): 78 ms at cost 10, doubling per step (cost 14: 1260 ms measured). */
const BCRYPT_MS_AT_COST_10 = 80;
/**
 * ns per KiB·pass of argon2 (@node-rs/argon2) with one lane: 212-400 measured (larger memory is
 * slower per KiB). Lanes run on extra threads but do the same total work, so p is not a discount.
 */
const ARGON2_NS_PER_KIB_PASS = 400;

export function verifyCostMs(hash: ParsedHash): number {
  switch (hash.format) {
    case 'argon2':
      return (hash.m * hash.t * ARGON2_NS_PER_KIB_PASS) / 1e6;
    case 'bcrypt':
      return BCRYPT_MS_AT_COST_10 * 2 ** (hash.cost - 10);
    case 'scrypt':
      return (2 ** hash.params.ln * hash.params.r * hash.params.p * SCRYPT_NS_PER_NRP) / 1e6;
    case 'pbkdf2': {
      const { ns, blockBytes } = PBKDF2_NS_PER_BLOCK[hash.params.digest]!;
      return (hash.params.rounds * Math.ceil(hash.params.hash.length / blockBytes) * ns) / 1e6;
    }
    case 'sha-crypt':
      return ((hash.setting.rounds ?? 5000) * SHA_CRYPT_US_PER_ROUND[hash.setting.variant]) / 1000;
    case 'md5crypt':
      return MD5_CRYPT_MS;
  }
}

/** The cost parameters of a hash as an administrator would recognise them. */
function describe(hash: ParsedHash): string {
  switch (hash.format) {
    case 'argon2':
      return `argon2 m=${hash.m},t=${hash.t}`;
    case 'bcrypt':
      return `bcrypt cost ${hash.cost}`;
    case 'scrypt':
      return `scrypt ln=${hash.params.ln},r=${hash.params.r},p=${hash.params.p}`;
    case 'pbkdf2':
      return `pbkdf2-${hash.params.digest} rounds=${hash.params.rounds} (${hash.params.hash.length}-byte hash)`;
    case 'sha-crypt':
      return `sha${hash.setting.variant === '5' ? 256 : 512}-crypt rounds=${hash.setting.rounds ?? 5000}`;
    case 'md5crypt':
      return 'md5crypt';
  }
}

/** The largest value of the hash's main cost parameter within the limit, the others as given. */
function mostAccepted(hash: ParsedHash): string {
  const per = verifyCostMs(hash);
  switch (hash.format) {
    case 'argon2':
      return `m·t at most ${Math.floor((MAX_VERIFY_MS * 1e6) / ARGON2_NS_PER_KIB_PASS)} KiB`;
    case 'bcrypt':
      return `cost at most ${10 + Math.floor(Math.log2(MAX_VERIFY_MS / BCRYPT_MS_AT_COST_10))}`;
    case 'scrypt':
      return `N·r·p at most ${Math.floor((MAX_VERIFY_MS * 1e6) / SCRYPT_NS_PER_NRP)}`;
    case 'pbkdf2':
    case 'sha-crypt': {
      const rounds = hash.format === 'pbkdf2' ? hash.params.rounds : (hash.setting.rounds ?? 5000);
      return `at most ${Math.floor((rounds * MAX_VERIFY_MS) / per)} rounds accepted`;
    }
    case 'md5crypt':
      return '';
  }
}

function humanDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 3_600_000)} h`;
}

/** Why verifying this hash would cost too much, or undefined when it is within the limit. */
export function costProblem(hash: ParsedHash): string | undefined {
  const ms = verifyCostMs(hash);
  if (ms <= MAX_VERIFY_MS) return undefined;
  return `${describe(hash)} would take ~${humanDuration(ms)} to verify (limit ${MAX_VERIFY_MS} ms); ${mostAccepted(hash)}`;
}

/**
 * SHA-crypt and md5crypt hash the password in every round, so their cost grows with its length
 * (sha512-crypt: a 1024-character password costs ~2.5 times an 8-character one). The estimate holds
 * up to this length; a longer password is not checked against those formats (a mismatch), which
 * keeps one attempt within the limit whatever an attacker types.
 */
const CRYPT_MAX_PASSWORD_LENGTH = 256;

export function passwordTooLongFor(hash: ParsedHash, password: string): boolean {
  return (hash.format === 'sha-crypt' || hash.format === 'md5crypt') && password.length > CRYPT_MAX_PASSWORD_LENGTH;
}

/** Bytes of memory one verification takes: argon2's m KiB, scrypt's 128·N·r; the others need little. */
function verifyMemoryBytes(hash: ParsedHash): number {
  switch (hash.format) {
    case 'argon2':
      return hash.m * 1024;
    case 'scrypt':
      return 128 * 2 ** hash.params.ln * hash.params.r;
    default:
      return 0;
  }
}

/**
 * A verification is costly (kept to the password threads' costly lane, src/workers/pool.ts) when
 * it takes long or much memory: then such checks cannot occupy every thread, nor multiply their
 * memory by the thread count. Sesame's own argon2id (19 MiB, t=2) and common imports (bcrypt
 * 10-11, Keycloak's pbkdf2) stay below both bounds.
 */
const COSTLY_VERIFY_MS = 250;
const COSTLY_VERIFY_BYTES = 64 * 1024 * 1024;

export function isCostly(hash: ParsedHash): boolean {
  return verifyCostMs(hash) > COSTLY_VERIFY_MS || verifyMemoryBytes(hash) > COSTLY_VERIFY_BYTES;
}
