import { pbkdf2Sync, timingSafeEqual } from 'node:crypto';
import { decodeLenientBase64 } from './crypt64.js';

/**
 * PBKDF2 hashes in passlib's modular-crypt layout `$pbkdf2[-sha<n>]$<rounds>$<salt>$<hash>`. Salt and
 * hash are passlib's ab64 (`.` for `+`, unpadded) or, as Keycloak exports and zitadel-tools
 * writes them, standard padded base64: `$pbkdf2-sha256$27500$<std-b64>$<std-b64>`.
 */
const DIGESTS: Record<string, string> = {
  '': 'sha1',
  '-sha1': 'sha1',
  '-sha224': 'sha224',
  '-sha256': 'sha256',
  '-sha384': 'sha384',
  '-sha512': 'sha512',
};

export interface Pbkdf2Params {
  digest: string;
  rounds: number;
  salt: Buffer;
  hash: Buffer;
}

const PATTERN = /^\$pbkdf2(-sha(?:1|224|256|384|512))?\$(\d{1,10})\$([^$]*)\$([^$]+)$/;

export function parsePbkdf2(encoded: string): Pbkdf2Params | undefined {
  const m = PATTERN.exec(encoded);
  if (!m) return undefined;
  const salt = decodeLenientBase64(m[3]!);
  const hash = decodeLenientBase64(m[4]!);
  if (!salt || !hash || hash.length === 0) return undefined;
  return { digest: DIGESTS[m[1] ?? '']!, rounds: Number(m[2]), salt, hash };
}

export const PBKDF2_MAX_ROUNDS = 10_000_000;

export function verifyPbkdf2(password: string, params: Pbkdf2Params): boolean {
  if (params.rounds < 1 || params.rounds > PBKDF2_MAX_ROUNDS) throw new RangeError('pbkdf2 rounds out of range');
  const computed = pbkdf2Sync(Buffer.from(password, 'utf8'), params.salt, params.rounds, params.hash.length, params.digest);
  return timingSafeEqual(computed, params.hash);
}
