import { randomBytes, randomFillSync, randomInt } from 'node:crypto';

/**
 * Numeric, time-ordered resource ids shaped like ZITADEL's (18-19 digit decimal strings):
 * milliseconds since 2019-01-01 shifted left 22 bits, plus a per-millisecond sequence.
 */
const EPOCH = 1_546_300_800_000n;
let lastMs = 0n;
let sequence = BigInt(randomInt(0, 1024));

/**
 * An id that must not repeat across threads and nodes whatever the rate (a token's `jti`, a grant,
 * a browser session): newId's time-ordered digits, then 12 random ones (~40 bits). newId alone
 * repeats when two threads or nodes draw the same sequence in the same millisecond, which the
 * directory's unique keys catch for its records but nothing would for these.
 */
export function newUniqueId(): string {
  return `${newId()}${String(randomInt(0, 1_000_000)).padStart(6, '0')}${String(randomInt(0, 1_000_000)).padStart(6, '0')}`;
}

export function newId(): string {
  const now = BigInt(Date.now()) - EPOCH;
  if (now === lastMs) {
    sequence = (sequence + 1n) & 0x3fffffn;
  } else {
    lastMs = now;
    sequence = BigInt(randomInt(0, 1024));
  }
  return ((now << 22n) | sequence).toString();
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A secret of `length` characters from [A-Za-z0-9] (64 chars ≈ 381 bits), without modulo bias. */
export function newAlphanumericSecret(length = 64): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += ALNUM[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

// One CSPRNG call per 128 tokens instead of one per token: the call overhead, not the bytes,
// dominated the token hot path.
const POOL = Buffer.alloc(4096);
let poolOffset = POOL.length;

/** An opaque bearer value: 32 random bytes (256 bits), base64url. */
export function newOpaqueToken(): string {
  if (poolOffset + 32 > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  const token = POOL.toString('base64url', poolOffset, poolOffset + 32);
  // Each slice is used once: zero it so a later read of the pool cannot reveal a handed-out token.
  POOL.fill(0, poolOffset, poolOffset + 32);
  poolOffset += 32;
  return token;
}
