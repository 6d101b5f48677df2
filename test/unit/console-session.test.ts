import { describe, expect, it } from 'vitest';
import { MasterKey } from '../../src/crypto/master-key.js';
import { consoleCookies, sealedSession, sessionOf, type ConsoleSession } from '../../src/http/console/session.js';

/** The console's session cookie stays one browsers keep (at most 4096 bytes), whatever the ID token's size. */
describe('console session cookie', () => {
  const key = MasterKey.fromSecret('a master key for the console session test');
  const policy = consoleCookies('http://localhost:8080').session;
  const session = (idToken: string): ConsoleSession => ({
    purpose: 'console-session',
    sid: 's',
    accessToken: 'a'.repeat(40),
    idToken,
    loginSession: 'V1_1',
    orgId: '1',
    until: Number.MAX_SAFE_INTEGER,
  });

  it('keeps a usual ID token, and leaves out one that would make the cookie too large to be kept', () => {
    const usual = sealedSession(key, session('h.'.padEnd(1200, 'x')));
    expect(sessionOf(key, policy, `${policy.name}=${usual}`)?.idToken).toHaveLength(1200);
    const large = sealedSession(key, session('h.'.padEnd(6000, 'x')));
    expect(large.length).toBeLessThanOrEqual(3800);
    const opened = sessionOf(key, policy, `${policy.name}=${large}`);
    expect(opened?.idToken).toBe('');
    expect(opened?.loginSession).toBe('V1_1');
  });
});
