import { invalidArgument } from '../model/errors.js';
import { parsePbkdf2 } from '../passwords/pbkdf2.js';
import { parseScrypt, SCRYPT_MAX_MEMORY, scryptMemory } from '../passwords/scrypt.js';

/**
 * Encoded password hashes accepted by ImportHumanUser (compat §1.3): the formats ZITADEL's passwap
 * verifiers read, each with the cost bounds ZITADEL enforces. The hash is stored as given.
 */
interface HashFormat {
  name: string;
  pattern: RegExp;
  /** Null when the cost parameters are in bounds, else which one is not. */
  costProblem?(match: RegExpExecArray): string | null;
  /** Whether the verifier can decode it (salt and hash encodings). */
  decodes?(encoded: string): boolean;
}

const B64 = '[A-Za-z0-9+/.]+={0,2}';
const CRYPT64 = '[./A-Za-z0-9]';

const within = (value: number, min: number, max: number) => value >= min && value <= max;

/** ZITADEL's bounds, plus the memory Sesame is willing to spend on one verification (1 GiB). */
function scryptCostProblem(ln: number, r: number, p: number): string | null {
  if (!within(ln, 14, 20) || !within(r, 8, 32) || !within(p, 1, 16)) return 'scrypt ln 14-20, r 8-32, p 1-16';
  return scryptMemory(ln, r) > SCRYPT_MAX_MEMORY ? 'scrypt memory 128·N·r at most 1 GiB' : null;
}

const FORMATS: readonly HashFormat[] = [
  {
    name: 'argon2',
    pattern: new RegExp(`^\\$argon2(?:id|i|d)\\$(?:v=\\d+\\$)?m=(\\d+),t=(\\d+),p=(\\d+)\\$${B64}\\$${B64}$`),
    costProblem: (m) =>
      within(Number(m[1]), 8192, 524288) && within(Number(m[2]), 1, 10) && within(Number(m[3]), 1, 16) ? null : 'argon2 m 8192-524288, t 1-10, p 1-16',
  },
  {
    name: 'bcrypt',
    pattern: new RegExp(`^\\$2[aby]\\$(\\d{2})\\$${CRYPT64}{53}$`),
    costProblem: (m) => (within(Number(m[1]), 10, 16) ? null : 'bcrypt cost 10-16'),
  },
  {
    // passlib's layout; passwap reads it with the identifier `7` as well.
    name: 'scrypt',
    pattern: new RegExp(`^\\$(?:scrypt|7)\\$ln=(\\d+),r=(\\d+),p=(\\d+)\\$${B64}\\$${B64}$`),
    costProblem: (m) => scryptCostProblem(Number(m[1]), Number(m[2]), Number(m[3])),
    decodes: (encoded) => parseScrypt(encoded) !== undefined,
  },
  {
    name: 'scrypt ($7$)',
    pattern: new RegExp(`^\\$7\\$${CRYPT64}{11}[^$]*\\$${CRYPT64}{43}$`),
    costProblem: (m) => {
      const params = parseScrypt(m[0]);
      return params ? scryptCostProblem(params.ln, params.r, params.p) : 'scrypt N, r, p';
    },
  },
  {
    name: 'pbkdf2',
    pattern: new RegExp(`^\\$pbkdf2(?:-sha(?:1|224|256|384|512))?\\$(\\d+)\\$${B64}\\$${B64}$`),
    costProblem: (m) => (within(Number(m[1]), 1000, 10_000_000) ? null : 'pbkdf2 rounds 1000-10000000'),
    decodes: (encoded) => parsePbkdf2(encoded) !== undefined,
  },
  {
    name: 'sha2 crypt',
    pattern: new RegExp(`^\\$[56]\\$(?:rounds=(\\d+)\\$)?[^$]{0,16}\\$(?:${CRYPT64}{43}|${CRYPT64}{86})$`),
    costProblem: (m) => (m[1] === undefined || within(Number(m[1]), 1000, 999_999_999) ? null : 'sha2 rounds 1000-999999999'),
  },
  { name: 'md5crypt', pattern: new RegExp(`^\\$1\\$[^$]{0,8}\\$${CRYPT64}{22}$`) },
];

/** Checks an encoded hash; throws `Errors.Hash.NotSupported` or `Errors.User.Password.Invalid`. */
export function checkEncodedHash(encoded: string): void {
  for (const format of FORMATS) {
    const match = format.pattern.exec(encoded);
    if (!match || (format.decodes && !format.decodes(encoded))) continue;
    const problem = format.costProblem?.(match);
    if (problem) throw invalidArgument('USER-Pw4rd', `hashedPassword: ${format.name} cost parameters out of bounds (${problem}) (Errors.User.Password.Invalid)`);
    return;
  }
  throw invalidArgument('CRYPT-Hash1', 'hashedPassword: unsupported or malformed hash format (Errors.Hash.NotSupported)');
}
