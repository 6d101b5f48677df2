import type { VerificationKey } from '../actors/keys.js';
import { SIGNING_ALGS, type SigningAlg } from '../config.js';
import { verifyJwsSignature } from '../crypto/jws-signature.js';

/**
 * Compact JWS assembly and parsing. Signing itself is done by a Signer (inline or pool); this
 * module only builds the signing input and checks signatures of tokens Sesame issued.
 */
const headerCache = new Map<string, string>();

/** base64url(header) for a key and `typ`, computed once per kid. */
export function encodedHeader(alg: string, kid: string, typ: string): string {
  const cacheKey = `${kid}\n${typ}`;
  let encoded = headerCache.get(cacheKey);
  if (!encoded) {
    encoded = Buffer.from(JSON.stringify({ alg, kid, typ })).toString('base64url');
    headerCache.set(cacheKey, encoded);
  }
  return encoded;
}

export function signingInput(header: string, payload: object): string {
  return `${header}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
}

export interface DecodedJws {
  header: { alg: SigningAlg; kid?: unknown; typ?: unknown };
  payload: Record<string, unknown>;
  signingInput: string;
  signature: Buffer;
}

const COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export function looksLikeJws(token: string): boolean {
  return token.length < 16_384 && COMPACT.test(token);
}

/**
 * The header rules every JWS Sesame reads must pass before its signature is checked (those jose
 * applies): an algorithm Sesame verifies (never `none` or HMAC), no critical extension (RFC 7515
 * §4.1.11: Sesame understands none, so any `crit` is refused, as is a malformed one), no unencoded
 * payload (RFC 7797 `b64`), and string `kid`/`typ` when present.
 */
export function jwsHeaderProblem(header: Record<string, unknown>): string | undefined {
  const { alg, crit } = header;
  if (typeof alg !== 'string' || !(SIGNING_ALGS as readonly string[]).includes(alg)) {
    return `algorithm ${String(alg)} is not accepted (${SIGNING_ALGS.join(', ')})`;
  }
  if (crit !== undefined) {
    if (!Array.isArray(crit) || crit.length === 0 || !crit.every((name) => typeof name === 'string' && name.length > 0)) {
      return 'crit header parameter is malformed';
    }
    return `critical header parameter ${crit.join(', ')} is not understood`;
  }
  if (header.b64 !== undefined && header.b64 !== true) return 'unencoded payload (b64) is not supported';
  if (header.kid !== undefined && typeof header.kid !== 'string') return 'kid header parameter must be a string';
  if (header.typ !== undefined && typeof header.typ !== 'string') return 'typ header parameter must be a string';
  return undefined;
}

/** Splits and JSON-decodes a compact JWS and checks its header, without verifying the signature. */
export function readJws(token: string): { jws: DecodedJws } | { problem: string } {
  if (!looksLikeJws(token)) return { problem: 'not a compact JWS' };
  const [h, p, s] = token.split('.') as [string, string, string];
  let header: unknown;
  let payload: unknown;
  try {
    header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
    payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
  } catch {
    return { problem: 'not a compact JWS' };
  }
  if (!isObject(header) || !isObject(payload)) return { problem: 'header and payload must be JSON objects' };
  const problem = jwsHeaderProblem(header);
  if (problem) return { problem };
  return {
    jws: { header: header as DecodedJws['header'], payload, signingInput: `${h}.${p}`, signature: Buffer.from(s, 'base64url') },
  };
}

export const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** readJws for callers that only need to know whether the JWS is acceptable. */
export function decodeJws(token: string): DecodedJws | undefined {
  const read = readJws(token);
  return 'jws' in read ? read.jws : undefined;
}

/** Verifies a decoded JWS with the key its `kid` names; the header's alg must be the key's. */
export function verifyJws(jws: DecodedJws, key: VerificationKey | undefined): boolean {
  if (!key || jws.header.alg !== key.alg) return false;
  return verifyJwsSignature(key.alg, key.publicKey, jws.signingInput, jws.signature);
}

/** Claims of a JWT Sesame signed (signature and `iss` checked; expiry not), e.g. an id_token_hint. */
export function verifiedOwnJwt(token: string, issuer: string, verificationKey: (kid: string) => VerificationKey | undefined, typ: string): Record<string, unknown> | undefined {
  const jws = decodeJws(token);
  if (!jws || jws.header.typ !== typ || typeof jws.header.kid !== 'string') return undefined;
  if (!verifyJws(jws, verificationKey(jws.header.kid))) return undefined;
  return jws.payload.iss === issuer ? jws.payload : undefined;
}
