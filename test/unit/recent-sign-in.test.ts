import { describe, expect, it } from 'vitest';
import { RECENT_SIGN_IN_SECONDS, signedInRecently } from '../../src/domain/recent-sign-in.js';

describe('a sign-in recent enough to change where recovery goes', () => {
  const now = 1_800_000_000;
  it('is one of the last minutes, by the token’s auth_time', () => {
    expect(signedInRecently({ authTime: now - RECENT_SIGN_IN_SECONDS, acting: false }, now)).toBe(true);
    expect(signedInRecently({ authTime: now - RECENT_SIGN_IN_SECONDS - 1, acting: false }, now)).toBe(false);
  });
  it('is never a PAT, a token without auth_time, or one acting for its subject', () => {
    expect(signedInRecently(undefined, now)).toBe(false);
    expect(signedInRecently({ acting: false }, now)).toBe(false);
    expect(signedInRecently({ authTime: now, acting: true }, now)).toBe(false);
  });
  it('is not a sign-in dated later than now', () => {
    expect(signedInRecently({ authTime: now + 60, acting: false }, now)).toBe(false);
  });
});
