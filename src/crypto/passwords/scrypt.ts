import { scryptSync, timingSafeEqual } from 'node:crypto';
import { atoi64, decode64Uint32, decodeLenientBase64, encode64LittleEndian } from './crypt64.js';

/**
 * scrypt password hashes in the two modular-crypt forms ZITADEL's passwap reads:
 * - passlib's `$scrypt$ln=<log2 N>,r=<r>,p=<p>$<salt b64>$<hash b64>` (passwap also accepts the
 *   same layout with the identifier `7`), and
 * - libsodium's / Colin Percival's `$7$<N><r:5><p:5><salt>$<hash>` crypt form, whose salt is used as
 *   the literal characters and whose hash is 32 bytes in little-endian crypt64.
 */
export interface ScryptParams {
  ln: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

/** Memory scrypt needs (128·N·r bytes); verification refuses parameters above this bound. */
export const SCRYPT_MAX_MEMORY = 1024 ** 3;

export function scryptMemory(ln: number, r: number): number {
  return 128 * 2 ** ln * r;
}

const PASSLIB = /^\$(?:scrypt|7)\$ln=(\d{1,2}),r=(\d{1,3}),p=(\d{1,3})\$([^$]*)\$([^$]+)$/;
const SODIUM = /^\$7\$([./0-9A-Za-z])([./0-9A-Za-z]{5})([./0-9A-Za-z]{5})([^$]*)\$([./0-9A-Za-z]{43})$/;

export function parseScrypt(encoded: string): ScryptParams | undefined {
  let m = PASSLIB.exec(encoded);
  if (m) {
    const salt = decodeLenientBase64(m[4]!);
    const hash = decodeLenientBase64(m[5]!);
    if (!salt || !hash || hash.length === 0) return undefined;
    return { ln: Number(m[1]), r: Number(m[2]), p: Number(m[3]), salt, hash };
  }
  m = SODIUM.exec(encoded);
  if (m) {
    const ln = atoi64(m[1]!);
    const r = decode64Uint32(m[2]!);
    const p = decode64Uint32(m[3]!);
    if (ln < 1 || !r || !p) return undefined;
    // The crypt form carries the hash in little-endian crypt64; keep its text for the comparison.
    return { ln, r, p, salt: Buffer.from(m[4]!, 'utf8'), hash: Buffer.from(m[5]!, 'latin1') };
  }
  return undefined;
}

function derive(password: Buffer, params: ScryptParams, length: number): Buffer {
  const N = 2 ** params.ln;
  return scryptSync(password, params.salt, length, { N, r: params.r, p: params.p, maxmem: scryptMemory(params.ln, params.r) + 16 * 1024 * 1024 });
}

/** True when the password matches; throws RangeError when the parameters are beyond what we compute. */
export function verifyScrypt(password: string, encoded: string, params: ScryptParams): boolean {
  if (scryptMemory(params.ln, params.r) > SCRYPT_MAX_MEMORY || params.p > 16) throw new RangeError('scrypt parameters too large');
  const pw = Buffer.from(password, 'utf8');
  if (encoded.startsWith('$7$') && !encoded.startsWith('$7$ln=')) {
    const computed = Buffer.from(encode64LittleEndian(derive(pw, params, 32)), 'latin1');
    return computed.length === params.hash.length && timingSafeEqual(computed, params.hash);
  }
  const computed = derive(pw, params, params.hash.length);
  return timingSafeEqual(computed, params.hash);
}
