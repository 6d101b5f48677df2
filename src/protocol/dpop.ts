import { SIGNING_ALGS, type SigningAlg } from '../config.js';
import { sha256Base64url } from '../util/hash.js';
import { OAuthError } from './errors.js';
import { isObject, readJws } from './jwt.js';

/** The algorithms a proof may use: asymmetric only (never `none` or HMAC), those Sesame verifies. */
export const DPOP_ALGS: readonly SigningAlg[] = SIGNING_ALGS;

/**
 * Longest DPoP header read (characters). Checked before anything is decoded: an RSA-4096 proof
 * with every claim is ~1.5 KB, so this leaves room and bounds what a hostile header can cost.
 */
export const MAX_DPOP_PROOF_LENGTH = 8192;

/** How far `iat` may be from now, either way (RFC 9449 §11.1: "acceptable window"), in seconds. */
export const DPOP_IAT_WINDOW_SECONDS = 60;

/** The public key of a proof, reduced to the members its thumbprint covers (RFC 7638 §3.2). */
export type DpopPublicJwk = { kty: 'EC'; crv: 'P-256'; x: string; y: string } | { kty: 'RSA'; e: string; n: string } | { kty: 'OKP'; crv: 'Ed25519'; x: string };

/** A DPoP key by its RFC 7638 thumbprint, as a bound token carries it in `cnf.jkt`. */
export interface DpopKey {
  jkt: string;
}

/**
 * A DPoP proof (RFC 9449), parsed; this module holds the pure rules. A proof is a JWS the client
 * signs with a key whose public half it puts in the header (`jwk`); a token issued with a proof is
 * bound to that key by its RFC 7638 thumbprint (`cnf.jkt`). Parsing and the claim checks are here;
 * the signature is checked in the worker pool, replays and nonces by src/services/dpop-proofs.ts.
 */
export interface DpopProof extends DpopKey {
  alg: SigningAlg;
  /** Its RFC 7638 SHA-256 thumbprint is `jkt`. */
  jwk: DpopPublicJwk;
  signingInput: string;
  signature: Buffer;
  jti: string;
  htm: string;
  htu: string;
  iat: number;
  ath: string | undefined;
  nonce: string | undefined;
}

/** What the request a proof comes with must match. */
export interface DpopExpectations {
  method: string;
  /** The endpoint's URL (the issuer's origin and the path). */
  url: string;
  nowSeconds: number;
  /** At a protected resource: the access token the proof must name in `ath`. */
  accessToken?: string | undefined;
}

export const invalidProof = (description: string) => new OAuthError('invalid_dpop_proof', description);

/** JWK members that only a private (or symmetric) key has (RFC 7518 §6): a header carrying one leaks a private key, and is refused. */
export const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;
const B64URL = /^[A-Za-z0-9_-]+$/;

const b64 = (value: unknown, minLength: number, maxLength: number): value is string => typeof value === 'string' && value.length >= minLength && value.length <= maxLength && B64URL.test(value);

/**
 * The public key a header `jwk` holds, for the proof's algorithm; a problem otherwise. Shapes are
 * checked here (the curve, coordinates of the curve's size, RSA-2048 at least and at most 8192);
 * whether a point is on its curve is left to the key import in the worker, which refuses it.
 */
export function publicJwkOf(jwk: unknown, alg: SigningAlg): DpopPublicJwk | string {
  if (!isObject(jwk)) return 'jwk header parameter must be a JSON object';
  if (PRIVATE_MEMBERS.some((member) => member in jwk)) return 'jwk header parameter must be a public key (it has private key members)';
  switch (alg) {
    case 'ES256':
      if (jwk.kty !== 'EC' || jwk.crv !== 'P-256') return 'ES256 needs an EC P-256 jwk';
      if (!b64(jwk.x, 43, 43) || !b64(jwk.y, 43, 43)) return 'jwk x and y must be 32-byte base64url values';
      return { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y };
    case 'RS256':
      if (jwk.kty !== 'RSA') return 'RS256 needs an RSA jwk';
      // 2048 bits (342 characters) as jose requires, 8192 at most (a bigger key is CPU for nothing).
      if (!b64(jwk.n, 342, 1366) || !b64(jwk.e, 1, 8)) return 'jwk n must be an RSA modulus of 2048 to 8192 bits, e a short base64url value';
      return { kty: 'RSA', e: jwk.e, n: jwk.n };
    case 'EdDSA':
      if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519') return 'EdDSA needs an OKP Ed25519 jwk';
      if (!b64(jwk.x, 43, 43)) return 'jwk x must be a 32-byte base64url value';
      return { kty: 'OKP', crv: 'Ed25519', x: jwk.x };
  }
}

/** RFC 7638 thumbprint (SHA-256, base64url): the required members in lexicographic order, no whitespace. */
export function jwkThumbprint(jwk: DpopPublicJwk): string {
  const canonical =
    jwk.kty === 'EC'
      ? `{"crv":"${jwk.crv}","kty":"EC","x":"${jwk.x}","y":"${jwk.y}"}`
      : jwk.kty === 'RSA'
        ? `{"e":"${jwk.e}","kty":"RSA","n":"${jwk.n}"}`
        : `{"crv":"${jwk.crv}","kty":"OKP","x":"${jwk.x}"}`;
  // The members were checked to be base64url and fixed names: nothing in them needs JSON escaping.
  return sha256Base64url(canonical);
}

/** `ath`: base64url SHA-256 of the access token (RFC 9449 §4.2). */
export function accessTokenHash(accessToken: string): string {
  return sha256Base64url(accessToken);
}

/**
 * A URL as `htu` compares it (RFC 9449 §4.3): without query and fragment, scheme and host in lower
 * case, a default port left out (RFC 3986 §6.2.2-6.2.3, which WHATWG URL parsing applies).
 */
export function normalizedHtu(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return undefined;
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

/** Splits and decodes a DPoP header value into a proof whose signature is still to be checked; throws invalid_dpop_proof. */
export function parseDpopProof(value: string): DpopProof {
  if (value.length > MAX_DPOP_PROOF_LENGTH) throw invalidProof(`DPoP proof longer than ${MAX_DPOP_PROOF_LENGTH} characters`);
  // Every header rule of a JWS Sesame reads (asymmetric algorithm, no `crit`, no `b64`), then DPoP's own.
  const read = readJws(value);
  if ('problem' in read) throw invalidProof(`DPoP proof refused: ${read.problem}`);
  const { header, payload, signingInput, signature } = read.jws;
  if (typeof header.typ !== 'string' || header.typ.toLowerCase().replace(/^application\//, '') !== 'dpop+jwt') throw invalidProof('DPoP proof typ must be dpop+jwt');
  const alg = header.alg;
  const jwk = publicJwkOf((header as Record<string, unknown>).jwk, alg);
  if (typeof jwk === 'string') throw invalidProof(`DPoP proof refused: ${jwk}`);
  const { jti, htm, htu, iat, ath, nonce } = payload;
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > 256) throw invalidProof('DPoP proof jti must be a string of 1 to 256 characters');
  if (typeof htm !== 'string') throw invalidProof('DPoP proof has no htm');
  if (typeof htu !== 'string') throw invalidProof('DPoP proof has no htu');
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw invalidProof('DPoP proof has no iat');
  if (ath !== undefined && typeof ath !== 'string') throw invalidProof('DPoP proof ath must be a string');
  if (nonce !== undefined && (typeof nonce !== 'string' || nonce.length === 0)) throw invalidProof('DPoP proof nonce must be a non-empty string');
  return { alg, jwk, jkt: jwkThumbprint(jwk), signingInput, signature, jti, htm, htu, iat, ath, nonce };
}

/** Checks a parsed proof against its request (method, URL, time, access token); throws invalid_dpop_proof. */
export function checkDpopClaims(proof: DpopProof, expect: DpopExpectations): void {
  if (proof.htm !== expect.method) throw invalidProof(`DPoP proof htm must be ${expect.method}`);
  if (normalizedHtu(proof.htu) !== normalizedHtu(expect.url)) throw invalidProof(`DPoP proof htu must be ${expect.url}`);
  if (proof.iat > expect.nowSeconds + DPOP_IAT_WINDOW_SECONDS) throw invalidProof('DPoP proof iat is in the future');
  if (proof.iat < expect.nowSeconds - DPOP_IAT_WINDOW_SECONDS) throw invalidProof('DPoP proof is too old (iat)');
  if (expect.accessToken !== undefined) {
    if (proof.ath === undefined) throw invalidProof('DPoP proof has no ath');
    if (proof.ath !== accessTokenHash(expect.accessToken)) throw invalidProof('DPoP proof ath does not match the access token');
  }
}

/** Until when a proof's `jti` must be remembered (unix seconds): past then its `iat` is refused anyway. */
export function proofReplayHorizon(proof: DpopProof): number {
  return Math.floor(proof.iat) + DPOP_IAT_WINDOW_SECONDS;
}
