import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * PKCE (RFC 7636) with the S256 method only: `plain` gives no protection against a stolen code
 * and Sesame requires S256 (docs/compatibility.md §6.2).
 */
const VALUE = /^[A-Za-z0-9._~-]{43,128}$/;

/** code_challenge and code_verifier share one syntax (RFC 7636 §4.1, §4.2). */
export function isPkceValue(value: string): boolean {
  return VALUE.test(value);
}

export function s256Challenge(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!isPkceValue(verifier)) return false;
  const computed = Buffer.from(s256Challenge(verifier));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}
