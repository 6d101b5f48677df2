import { createHash } from 'node:crypto';
import { encodePermuted } from './crypt64.js';

/**
 * SHA-256-crypt (`$5$`) and SHA-512-crypt (`$6$`), as specified by Ulrich Drepper
 * ("Unix crypt using SHA-256 and SHA-512", the algorithm glibc's crypt(3) implements).
 */
const SHA_CRYPT_DEFAULT_ROUNDS = 5000;
const SHA_CRYPT_MIN_ROUNDS = 1000;
export const SHA_CRYPT_MAX_ROUNDS = 999_999_999;

type Variant = { id: '5' | '6'; alg: 'sha256' | 'sha512'; size: number };
const SHA256: Variant = { id: '5', alg: 'sha256', size: 32 };
const SHA512: Variant = { id: '6', alg: 'sha512', size: 64 };

// Byte order of the final encoding (the spec's b64_from_24bit calls).
const GROUPS_256: [number, number, number][] = [
  [0, 10, 20],
  [21, 1, 11],
  [12, 22, 2],
  [3, 13, 23],
  [24, 4, 14],
  [15, 25, 5],
  [6, 16, 26],
  [27, 7, 17],
  [18, 28, 8],
  [9, 19, 29],
];
const TAIL_256 = [-1, 31, 30, 3] as const;
const GROUPS_512: [number, number, number][] = [
  [0, 21, 42],
  [22, 43, 1],
  [44, 2, 23],
  [3, 24, 45],
  [25, 46, 4],
  [47, 5, 26],
  [6, 27, 48],
  [28, 49, 7],
  [50, 8, 29],
  [9, 30, 51],
  [31, 52, 10],
  [53, 11, 32],
  [12, 33, 54],
  [34, 55, 13],
  [56, 14, 35],
  [15, 36, 57],
  [37, 58, 16],
  [59, 17, 38],
  [18, 39, 60],
  [40, 61, 19],
  [62, 20, 41],
];
const TAIL_512 = [-1, -1, 63, 2] as const;

/** `bytes` repeated to `length` bytes. */
function stretch(bytes: Buffer, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i += bytes.length) bytes.copy(out, i, 0, Math.min(bytes.length, length - i));
  return out;
}

function digest(v: Variant, ...parts: Buffer[]): Buffer {
  const h = createHash(v.alg);
  for (const p of parts) h.update(p);
  return h.digest();
}

function shaCryptRaw(v: Variant, password: Buffer, salt: Buffer, rounds: number): Buffer {
  const b = digest(v, password, salt, password);
  const a = createHash(v.alg).update(password).update(salt);
  a.update(stretch(b, password.length));
  for (let n = password.length; n > 0; n >>= 1) a.update(n & 1 ? b : password);
  let c = a.digest();

  const dp = createHash(v.alg);
  for (let i = 0; i < password.length; i++) dp.update(password);
  const p = stretch(dp.digest(), password.length);
  const ds = createHash(v.alg);
  for (let i = 0; i < 16 + c[0]!; i++) ds.update(salt);
  const s = stretch(ds.digest(), salt.length);

  for (let i = 0; i < rounds; i++) {
    const h = createHash(v.alg);
    h.update(i & 1 ? p : c);
    if (i % 3 !== 0) h.update(s);
    if (i % 7 !== 0) h.update(p);
    h.update(i & 1 ? c : p);
    c = h.digest();
  }
  return c;
}

export interface ShaCryptSetting {
  variant: '5' | '6';
  /** Explicit `rounds=` value, or undefined for the default 5000. */
  rounds?: number;
  salt: string;
}

const PATTERN = /^\$([56])\$(?:rounds=(\d{1,10})\$)?([^$]{0,16})[^$]*\$([./0-9A-Za-z]+)$/;

/** Parses `$5$[rounds=N$]salt$hash`; undefined when the string is not in that form. */
export function parseShaCrypt(encoded: string): (ShaCryptSetting & { hash: string }) | undefined {
  const m = PATTERN.exec(encoded);
  if (!m) return undefined;
  const setting: ShaCryptSetting & { hash: string } = { variant: m[1] as '5' | '6', salt: m[3]!, hash: m[4]! };
  if (m[2] !== undefined) setting.rounds = Number(m[2]);
  return setting;
}

/** Computes the full `$5$…`/`$6$…` string for a password and setting. */
export function shaCrypt(password: string | Buffer, setting: ShaCryptSetting): string {
  const v = setting.variant === '5' ? SHA256 : SHA512;
  const rounds = Math.min(Math.max(setting.rounds ?? SHA_CRYPT_DEFAULT_ROUNDS, SHA_CRYPT_MIN_ROUNDS), SHA_CRYPT_MAX_ROUNDS);
  const salt = Buffer.from(setting.salt.slice(0, 16), 'utf8');
  const raw = shaCryptRaw(v, Buffer.from(password), salt, rounds);
  const encoded = v === SHA256 ? encodePermuted(raw, GROUPS_256, TAIL_256) : encodePermuted(raw, GROUPS_512, TAIL_512);
  const roundsPart = setting.rounds === undefined ? '' : `rounds=${rounds}$`;
  return `$${v.id}$${roundsPart}${setting.salt.slice(0, 16)}$${encoded}`;
}
