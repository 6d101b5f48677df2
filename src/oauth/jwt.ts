import type { VerificationKey } from '../actors/keys.js';
import { verifyJwsSignature } from '../workers/sign.js';

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
  header: { alg?: unknown; kid?: unknown; typ?: unknown };
  payload: Record<string, unknown>;
  signingInput: string;
  signature: Buffer;
}

const COMPACT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export function looksLikeJws(token: string): boolean {
  return token.length < 16_384 && COMPACT.test(token);
}

/** Splits and JSON-decodes a compact JWS without verifying it; undefined when malformed. */
export function decodeJws(token: string): DecodedJws | undefined {
  if (!looksLikeJws(token)) return undefined;
  const [h, p, s] = token.split('.') as [string, string, string];
  try {
    const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
    if (typeof header !== 'object' || header === null || typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
      return undefined;
    }
    return { header, payload, signingInput: `${h}.${p}`, signature: Buffer.from(s, 'base64url') };
  } catch {
    return undefined;
  }
}

/** Verifies a decoded JWS with the key its `kid` names; the header's alg must be the key's. */
export function verifyJws(jws: DecodedJws, key: VerificationKey | undefined): boolean {
  if (!key || jws.header.alg !== key.alg) return false;
  return verifyJwsSignature(key.alg, key.publicKey, jws.signingInput, jws.signature);
}

/** Claims of a JWT Sesame signed (signature and `iss` checked; expiry not), e.g. an id_token_hint. */
export function verifiedOwnJwt(
  token: string,
  issuer: string,
  verificationKey: (kid: string) => VerificationKey | undefined,
  typ: string,
): Record<string, unknown> | undefined {
  const jws = decodeJws(token);
  if (!jws || jws.header.typ !== typ || typeof jws.header.kid !== 'string') return undefined;
  if (!verifyJws(jws, verificationKey(jws.header.kid))) return undefined;
  return jws.payload.iss === issuer ? jws.payload : undefined;
}
