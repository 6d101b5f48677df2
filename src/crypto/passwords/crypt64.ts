/**
 * The "crypt64" alphabet and the little-endian 6-bit encodings of crypt(3) hashes (md5crypt,
 * sha256/sha512-crypt, libsodium's `$7$` scrypt), plus the lenient standard/passlib base64 decoder
 * used by the PHC-style formats.
 */
export const ITOA64 = './0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

const INDEX = new Map([...ITOA64].map((c, i) => [c, i]));

/** Index of a crypt64 character, or -1. */
export function atoi64(char: string): number {
  return INDEX.get(char) ?? -1;
}

/** crypt(3)'s `b64_from_24bit`: `count` characters of (b2 << 16 | b1 << 8 | b0), low bits first. */
function b64From24(b2: number, b1: number, b0: number, count: number): string {
  let w = (b2 << 16) | (b1 << 8) | b0;
  let out = '';
  for (let i = 0; i < count; i++) {
    out += ITOA64[w & 0x3f];
    w >>>= 6;
  }
  return out;
}

/** Encodes bytes as crypt(3) does with a permutation: groups of three byte indexes, 4 chars each. */
export function encodePermuted(bytes: Uint8Array, groups: readonly (readonly [number, number, number])[], tail: readonly [number, number, number, number]): string {
  let out = '';
  for (const [a, b, c] of groups) out += b64From24(bytes[a]!, bytes[b]!, bytes[c]!, 4);
  const [a, b, c, count] = tail;
  const at = (i: number) => (i < 0 ? 0 : bytes[i]!);
  return out + b64From24(at(a), at(b), at(c), count);
}

/** libsodium's `encode64`: bytes taken three at a time little-endian, 6 bits per char, low bits first. */
export function encode64LittleEndian(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; ) {
    let value = 0;
    let bits = 0;
    do {
      value |= bytes[i++]! << bits;
      bits += 8;
    } while (bits < 24 && i < bytes.length);
    for (let bit = 0; bit < bits; bit += 6) {
      out += ITOA64[value & 0x3f];
      value >>>= 6;
    }
  }
  return out;
}

/** libsodium's `decode64_uint32` for a fixed number of chars; undefined on a bad character. */
export function decode64Uint32(text: string): number | undefined {
  let value = 0;
  for (let i = 0; i < text.length; i++) {
    const n = atoi64(text[i]!);
    if (n < 0) return undefined;
    value += n * 2 ** (6 * i);
  }
  return value;
}

const B64 = /^[A-Za-z0-9+/.]*={0,2}$/;

/**
 * Decodes standard base64 (with or without padding) and passlib's "ab64" (`.` instead of `+`, no
 * padding); undefined when the text is neither. The two never clash: ab64 has no `+`, std no `.`.
 */
export function decodeLenientBase64(text: string): Buffer | undefined {
  if (!B64.test(text) || (text.includes('.') && text.includes('+'))) return undefined;
  const std = text.replace(/\./g, '+').replace(/=+$/, '');
  if (std.length % 4 === 1) return undefined;
  return Buffer.from(std, 'base64');
}
