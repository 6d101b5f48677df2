import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * CSRF tokens of the login forms: an HMAC of the user-agent cookie and the auth request, with a
 * key derived from the master key. A form posted from another site lacks a token matching the
 * victim's cookie; a token leaked from one request is useless for another.
 */
export function csrfToken(key: Buffer, agentCookie: string, authRequestId: string): string {
  return createHmac('sha256', key).update(`${agentCookie}|${authRequestId}`).digest('base64url');
}

export function csrfValid(key: Buffer, agentCookie: string, authRequestId: string, presented: string | undefined): boolean {
  if (!presented) return false;
  const expected = Buffer.from(csrfToken(key, agentCookie, authRequestId));
  const given = Buffer.from(presented);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
