import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { clock } from '../util/clock.js';

/**
 * TOTP (RFC 6238) as authenticator apps and ZITADEL (pquerna/otp) use it: HMAC-SHA-1, 6 digits,
 * 30-second steps, accepting one step either side for clock drift. Secrets are RFC 4648 base32.
 */
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const STEP_SECONDS = 30;
const DIGITS = 6;

export function base32Decode(text: string): Buffer | undefined {
  const clean = text.replace(/[\s=-]/g, '').toUpperCase();
  if (clean.length === 0) return undefined;
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const c of clean) {
    const index = ALPHABET.indexOf(c);
    if (index === -1) return undefined;
    value = (value << 5) | index;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

export function base32Encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** A new 160-bit secret (RFC 4226 §4 recommends at least 160 bits), base32. */
export function newTotpSecret(): string {
  return base32Encode(randomBytes(20));
}

/** HOTP (RFC 4226 §5.3) for one counter value. */
export function hotp(secret: Buffer, counter: number): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac('sha1', secret).update(message).digest();
  const offset = mac[mac.length - 1]! & 0x0f;
  const code = (mac.readUInt32BE(offset) & 0x7fffffff) % 10 ** DIGITS;
  return code.toString().padStart(DIGITS, '0');
}

export function totpAt(secretBase32: string, unixSeconds: number): string {
  const secret = base32Decode(secretBase32);
  if (!secret) throw new Error('invalid base32 TOTP secret');
  return hotp(secret, Math.floor(unixSeconds / STEP_SECONDS));
}

/**
 * The time step a code matches (now ±1 step), or undefined. Callers refuse a step at or before
 * the last one used, so a code cannot be replayed.
 */
export function verifyTotp(secretBase32: string, code: string, unixSeconds = clock.now() / 1000): number | undefined {
  const secret = base32Decode(secretBase32);
  if (!secret || !/^\d{6}$/.test(code)) return undefined;
  const now = Math.floor(unixSeconds / STEP_SECONDS);
  for (const step of [now, now - 1, now + 1]) {
    const expected = Buffer.from(hotp(secret, step));
    if (timingSafeEqual(expected, Buffer.from(code))) return step;
  }
  return undefined;
}

/**
 * The Key URI authenticator apps read from the enrollment QR code
 * (github.com/google/google-authenticator/wiki/Key-Uri-Format): `otpauth://totp/<issuer>:<account>`.
 */
export function otpauthUri(issuer: string, account: string, secretBase32: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const params = new URLSearchParams({ secret: secretBase32, issuer, algorithm: 'SHA1', digits: String(DIGITS), period: String(STEP_SECONDS) });
  return `otpauth://totp/${label}?${params}`;
}
