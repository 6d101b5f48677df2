import type { KeyObject } from 'node:crypto';
import { SIGNING_ALGS, type SigningAlg } from '../config.js';
import type { OAuthError } from './errors.js';
import type { DecodedJws } from './jwt.js';

/** The algorithms readJws accepts are those Sesame signs with. */
export type AssertionAlg = SigningAlg;

export const ASSERTION_ALGS: readonly AssertionAlg[] = SIGNING_ALGS;

/** Oldest accepted `iat` (ZITADEL: one hour). */
const MAX_ASSERTION_AGE_SECONDS = 3600;

export interface AssertionExpectations {
  /** `iss` and `sub` must both equal this (client id, or machine user id). */
  subject: string;
  /** `aud` must contain one of these (the issuer, or the endpoint URL). */
  audiences: readonly string[];
  /** Clock skew tolerated on `exp` and `iat`, in seconds. */
  leewaySeconds: number;
  nowSeconds: number;
}

export interface AssertionClaims {
  iss: string;
  sub: string;
  exp: number;
  iat: number;
  jti: string | undefined;
}

/**
 * Builds the error a refused assertion reports (invalid_client for client auth, invalid_grant for
 * the grant). `description` is what the caller may read: the
 * assertion's own mistakes (a header, a claim, a replay). Outcomes that would tell an attacker which
 * clients, users or keys exist give a generic description and the real reason as `detail`, for the log.
 */
export type AssertionFailure = (description: string, detail?: string) => OAuthError;

/** What a caller reads when the answer would otherwise tell who or what exists. */
export const ASSERTION_NOT_VERIFIED = 'assertion could not be verified';

/** The header of an assertion readJws accepted: `kid` is required to find the registered key. */
export function assertionHeader(jws: DecodedJws, fail: AssertionFailure): { kid: string; alg: AssertionAlg } {
  const { alg, kid } = jws.header;
  if (typeof kid !== 'string' || kid.length === 0) throw fail('assertion header has no kid');
  return { kid, alg };
}

/** The algorithm a public key can verify; an assertion must use exactly that one. */
export function algorithmOfKey(key: KeyObject): AssertionAlg | undefined {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      // As jose: RSA keys shorter than 2048 bits are refused.
      return (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048 ? 'RS256' : undefined;
    case 'ec':
      return key.asymmetricKeyDetails?.namedCurve === 'prime256v1' ? 'ES256' : undefined;
    case 'ed25519':
      return 'EdDSA';
    default:
      return undefined;
  }
}

/**
 * Checks the claims of an assertion whose signature is valid.
 *
 * Rules for signed assertions (RFC 7523): `private_key_jwt` client assertions and JWT profile
 * grant assertions. Pure: the caller supplies the decoded JWS, the key it names and the clock;
 * the signature itself is checked in the worker pool.
 */
export function checkAssertionClaims(jws: DecodedJws, expect: AssertionExpectations, fail: AssertionFailure): AssertionClaims {
  const p = jws.payload;
  const { nowSeconds: now, leewaySeconds: leeway } = expect;
  if (p.iss !== expect.subject || p.sub !== expect.subject) throw fail('assertion iss and sub must both be the client');
  const aud = Array.isArray(p.aud) ? p.aud : [p.aud];
  if (!aud.some((a) => typeof a === 'string' && expect.audiences.includes(a.replace(/\/+$/, '')))) {
    throw fail('assertion audience does not contain this issuer');
  }
  if (typeof p.exp !== 'number' || !Number.isFinite(p.exp)) throw fail('assertion has no exp');
  if (p.exp + leeway + 1 <= now) throw fail('assertion expired');
  if (typeof p.iat !== 'number' || !Number.isFinite(p.iat)) throw fail('assertion has no iat');
  if (p.iat > now + leeway) throw fail('assertion issued in the future');
  if (p.iat < now - MAX_ASSERTION_AGE_SECONDS - leeway) throw fail('assertion is too old');
  if (p.nbf !== undefined && (typeof p.nbf !== 'number' || p.nbf > now + leeway)) throw fail('assertion not yet valid');
  if (p.jti !== undefined && (typeof p.jti !== 'string' || p.jti.length === 0 || p.jti.length > 256)) {
    throw fail('assertion jti must be a non-empty string');
  }
  return { iss: p.iss as string, sub: p.sub as string, exp: p.exp, iat: p.iat, jti: p.jti as string | undefined };
}
