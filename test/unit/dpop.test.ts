import { generateKeyPairSync, sign } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { OAuthError } from '../../src/protocol/errors.js';
import {
  accessTokenHash,
  checkDpopClaims,
  DPOP_IAT_WINDOW_SECONDS,
  jwkThumbprint,
  MAX_DPOP_PROOF_LENGTH,
  normalizedHtu,
  parseDpopProof,
  publicJwkOf,
  type DpopProof,
} from '../../src/protocol/dpop.js';
import { DPOP_NONCE_PERIOD_MS, DpopNonces } from '../../src/services/dpop-nonces.js';
import { installClock, ManualClock } from '../../src/util/clock.js';
import { SignatureCheck } from '../../src/workers/signature-check.js';

/**
 * The pure DPoP rules (src/protocol/dpop.ts): thumbprints, htu comparison, what a proof's header
 * and claims must be; the check of a proof's own key in SignatureCheck (never a thrown error for a
 * hostile key); and the nonce rotation.
 */
const URL_ = 'https://sesame.example/oauth/v2/token';
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function es256() {
  const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = pair.publicKey.export({ format: 'jwk' }) as { kty: 'EC'; crv: 'P-256'; x: string; y: string };
  const signed = (header: Record<string, unknown>, payload: Record<string, unknown>) => {
    const input = `${b64(header)}.${b64(payload)}`;
    return `${input}.${sign('sha256', Buffer.from(input), { key: pair.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
  };
  return { pair, jwk, signed, privateJwk: pair.privateKey.export({ format: 'jwk' }) };
}

const claims = (extra: Record<string, unknown> = {}) => ({ jti: 'j1', htm: 'POST', htu: URL_, iat: 1_000_000, ...extra });
const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(OAuthError);
    return `${(error as OAuthError).error}: ${(error as OAuthError).description}`;
  }
  throw new Error('not refused');
};

describe('DPoP proof rules', () => {
  it('RFC 7638 §3.1: the thumbprint of the example RSA key', () => {
    const n =
      '0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw';
    const jwk = publicJwkOf({ kty: 'RSA', n, e: 'AQAB', alg: 'RS256', kid: '2011-04-29' }, 'RS256');
    expect(typeof jwk).toBe('object');
    expect(jwkThumbprint(jwk as Exclude<typeof jwk, string>)).toBe('NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs');
  });

  it('htu: without query and fragment, scheme and host in lower case, default port dropped', () => {
    expect(normalizedHtu('HTTPS://Sesame.Example:443/oauth/v2/token?x=1#y')).toBe(URL_);
    expect(normalizedHtu('https://sesame.example:8443/oauth/v2/token')).toBe('https://sesame.example:8443/oauth/v2/token');
    expect(normalizedHtu('https://sesame.example/oauth/v2/Token')).not.toBe(URL_);
    expect(normalizedHtu('ftp://sesame.example/oauth/v2/token')).toBeUndefined();
    expect(normalizedHtu('not a url')).toBeUndefined();
  });

  it('reads a well-formed proof: key, thumbprint, claims', () => {
    const key = es256();
    const proof = parseDpopProof(key.signed({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk }, claims({ ath: 'a', nonce: 'n' })));
    expect(proof).toMatchObject({ alg: 'ES256', jwk: { kty: 'EC', crv: 'P-256', x: key.jwk.x, y: key.jwk.y }, jti: 'j1', htm: 'POST', htu: URL_, iat: 1_000_000, ath: 'a', nonce: 'n' });
    expect(proof.jkt).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('refuses hostile headers before any signature is checked', () => {
    const key = es256();
    const header = { alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk };
    const parse =
      (h: Record<string, unknown>, p: Record<string, unknown> = claims()) =>
      () =>
        parseDpopProof(key.signed(h, p));
    expect(refusal(parse({ ...header, jwk: key.privateJwk }))).toMatch(/^invalid_dpop_proof: .*private key/);
    expect(refusal(parse({ ...header, jwk: { ...key.jwk, k: 'c2VjcmV0' } }))).toMatch(/private key/);
    expect(refusal(parse({ ...header, alg: 'none' }))).toMatch(/algorithm none/);
    expect(refusal(parse({ ...header, alg: 'HS256' }))).toMatch(/algorithm HS256/);
    expect(refusal(parse({ ...header, typ: 'JWT' }))).toMatch(/typ/);
    expect(refusal(parse({ ...header, crit: ['x'] }))).toMatch(/critical/);
    expect(refusal(parse({ ...header, jwk: undefined }))).toMatch(/jwk/);
    expect(refusal(parse({ ...header, alg: 'RS256' }))).toMatch(/RSA/);
    expect(refusal(parse({ ...header, jwk: { ...key.jwk, crv: 'P-384' } }))).toMatch(/P-256/);
    expect(refusal(parse(header, claims({ jti: 'x'.repeat(257) })))).toMatch(/jti/);
    expect(refusal(parse(header, claims({ iat: '1' })))).toMatch(/iat/);
    expect(refusal(() => parseDpopProof('a'.repeat(MAX_DPOP_PROOF_LENGTH + 1)))).toMatch(/longer than/);
    expect(refusal(() => parseDpopProof('a.b'))).toMatch(/compact JWS/);
    // typ is a media type: compared case-insensitively, with or without "application/".
    expect(parse({ ...header, typ: 'application/DPoP+JWT' })()).toMatchObject({ alg: 'ES256' });
  });

  it('checks method, URL, the iat window and ath', () => {
    const key = es256();
    const proof: DpopProof = parseDpopProof(key.signed({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk }, claims({ ath: accessTokenHash('at') })));
    const expect_ = { method: 'POST', url: URL_, nowSeconds: 1_000_000 };
    expect(() => checkDpopClaims(proof, expect_)).not.toThrow();
    expect(() => checkDpopClaims(proof, { ...expect_, nowSeconds: 1_000_000 + DPOP_IAT_WINDOW_SECONDS })).not.toThrow();
    expect(() => checkDpopClaims(proof, { ...expect_, nowSeconds: 1_000_000 - DPOP_IAT_WINDOW_SECONDS })).not.toThrow();
    expect(refusal(() => checkDpopClaims(proof, { ...expect_, nowSeconds: 1_000_000 + DPOP_IAT_WINDOW_SECONDS + 1 }))).toMatch(/too old/);
    expect(refusal(() => checkDpopClaims(proof, { ...expect_, nowSeconds: 1_000_000 - DPOP_IAT_WINDOW_SECONDS - 1 }))).toMatch(/future/);
    expect(refusal(() => checkDpopClaims(proof, { ...expect_, method: 'GET' }))).toMatch(/htm/);
    expect(refusal(() => checkDpopClaims(proof, { ...expect_, url: 'https://sesame.example/oidc/v1/userinfo' }))).toMatch(/htu/);
    expect(() => checkDpopClaims(proof, { ...expect_, accessToken: 'at' })).not.toThrow();
    expect(refusal(() => checkDpopClaims(proof, { ...expect_, accessToken: 'other' }))).toMatch(/ath/);
  });
});

describe('a proof key checked in SignatureCheck', () => {
  it('verifies with the header key; a key off its curve or too small verifies nothing, without throwing', () => {
    const key = es256();
    const proof = parseDpopProof(key.signed({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk }, claims()));
    const check = new SignatureCheck();
    const item = { keyId: proof.jkt, jwk: proof.jwk, alg: proof.alg, signingInput: proof.signingInput, signature: proof.signature };
    expect(check.check(item)).toBe(true);
    expect(check.check({ ...item, signingInput: `${item.signingInput}x` })).toBe(false);
    expect(check.check({ ...item, keyId: 'off-curve', jwk: { ...proof.jwk, y: key.jwk.x } })).toBe(false);
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'jwk' }) as Record<string, string>;
    expect(check.check({ ...item, keyId: 'small', alg: 'RS256', jwk: { kty: 'RSA', n: small.n!, e: small.e! } })).toBe(false);
  });
});

describe('DPoP nonces', () => {
  let uninstall: (() => void) | undefined;
  afterEach(() => uninstall?.());

  it('one per period, the previous one still accepted, the one before refused; the same for every instance with the key', () => {
    const clock = new ManualClock(1_700_000_000_000);
    uninstall = installClock(clock);
    const key = Buffer.alloc(32, 7);
    const nonces = new DpopNonces(key);
    const first = nonces.current();
    expect(new DpopNonces(key).current()).toBe(first);
    expect(new DpopNonces(Buffer.alloc(32, 8)).current()).not.toBe(first);
    clock.advance(DPOP_NONCE_PERIOD_MS);
    const second = nonces.current();
    expect(second).not.toBe(first);
    expect(nonces.accepts(first)).toBe(true);
    expect(nonces.accepts(second)).toBe(true);
    clock.advance(DPOP_NONCE_PERIOD_MS);
    expect(nonces.accepts(first)).toBe(false);
    expect(nonces.accepts(second)).toBe(true);
    expect(nonces.accepts('')).toBe(false);
  });
});
