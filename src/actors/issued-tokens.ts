import { binaryRecordKind, recordKind, type RecordKind, type StorePort, type StoreRead } from '../storage/store-port.js';
import { sha256 } from '../util/hash.js';
import { newOpaqueToken } from '../util/ids.js';
import { clock } from '../util/clock.js';

/** RFC 8693 `act`: who acts for the subject, with earlier actors nested. */
export interface ActorClaim {
  iss: string;
  sub: string;
  act?: ActorClaim;
}

export interface AccessTokenClaims {
  /** Token id (`jti`). */
  jti: string;
  /** Subject: the user id. */
  sub: string;
  /** The client the token was issued to. */
  clientId: string;
  aud: readonly string[];
  scope: string;
  /** Unix seconds. */
  iat: number;
  exp: number;
  /** The authorization (code or implicit) or refresh family the token came from: revoking it revokes the token. */
  grantId?: string;
  /** The user session (OIDC `sid`): ending it revokes the token. */
  sid?: string;
  /** When the user authenticated (unix seconds) and how (`pwd`, `otp`, `mfa`). */
  authTime?: number;
  amr?: readonly string[];
  /** Set on tokens from an impersonating token exchange. */
  act?: ActorClaim;
  /** A DPoP-bound token's key (RFC 9449 §6): the RFC 7638 thumbprint every use must prove. */
  cnf?: { jkt: string };
}

export type RevokeOutcome = 'revoked' | 'unknown' | 'foreign';

/** Separates a grant id from the ids of the grants it was made from (`~` is URL-safe, in no grant id). */
export const GRANT_CHAIN_SEPARATOR = '~';

/** Marks a browser session (its sid) in a grant chain: the chain ends with it too. */
export const SESSION_IN_CHAIN = '@';

/** A grant id and its ancestors (and sessions, `@<sid>`), its own first. */
export function grantChain(grantId: string): string[] {
  return grantId.split(GRANT_CHAIN_SEPARATOR);
}

/** Opaque access tokens under the SHA-256 of the token. */
const TOKENS = binaryRecordKind<AccessTokenClaims>('tokens');
/** Revocations: id → until when kept (unix seconds, the last of their tokens' expiry). */
const REVOKED_JWTS = recordKind<number>('revokedJwts');
const REVOKED_GRANTS = recordKind<number>('revokedGrants');
const REVOKED_SESSIONS = recordKind<number>('revokedSessions');

/**
 * The revocations that void a token of this grant: the grant's own, and for a grant made from
 * another (token exchange), which names its ancestors after its own id (`TE_1~V2_2`, see
 * grantChain) and the browser sessions of its other parties (`~@V1_3`: an impersonation's actor),
 * each ancestor's and the end of each session.
 */
function grantRevocations(grantId: string): StoreRead[] {
  return grantChain(grantId).map((id) => (id.startsWith(SESSION_IN_CHAIN) ? { kind: REVOKED_SESSIONS, key: id.slice(SESSION_IN_CHAIN.length) } : { kind: REVOKED_GRANTS, key: id }));
}

/** The revocations that void a token of these claims: of its grant chain, and the end of its session. */
function originRevocations(claims: Pick<AccessTokenClaims, 'grantId' | 'sid'>): StoreRead[] {
  const reads = claims.grantId !== undefined ? grantRevocations(claims.grantId) : [];
  if (claims.sid !== undefined) reads.push({ kind: REVOKED_SESSIONS, key: claims.sid });
  return reads;
}

/**
 * Opaque tokens' claims once read, by the token's digest: a record is written once and never
 * changed, so a use of a known token asks the store only whether it is still there and unrevoked
 * (one look). Bounded: the entry asked about least recently leaves first.
 */
const OPAQUE_CLAIMS_KEPT = 4096;

/**
 * What is on record about issued access tokens: opaque tokens (stored under the SHA-256 of the
 * token, so a stolen data dir yields no usable token) and every revocation — of a JWT (JWTs
 * themselves are never stored: issuing one writes nothing), of a grant, of a browser session (`sid`).
 * Browser sessions themselves are the user-sessions actor's. Every HTTP thread reads and writes
 * these records in the store itself (no decision is held in one thread's memory), so a revocation
 * made on any thread holds on every thread once its write is durable, which is when it is answered.
 * A token's use asks the store once: whether the token (or a revocation of it) and a revocation of
 * its grant chain or session are there, in one look (StorePort.present).
 */
export class IssuedTokensActor {
  private readonly opaqueClaims = new Map<string, Readonly<AccessTokenClaims>>();

  constructor(private readonly store: StorePort) {}

  /** True when the token's grant was revoked or its user session ended. */
  async isRevokedByOrigin(claims: Pick<AccessTokenClaims, 'grantId' | 'sid'>): Promise<boolean> {
    return (await this.store.present(originRevocations(claims))).includes(true);
  }

  /** True when a JWT (its `jti`) was revoked, or its grant, or its user session ended: one look. */
  async isJwtRevokedOrByOrigin(claims: AccessTokenClaims): Promise<boolean> {
    return (await this.store.present([{ kind: REVOKED_JWTS, key: claims.jti }, ...originRevocations(claims)])).includes(true);
  }

  /** Whether a grant was revoked: its own revocation, an ancestor's, or the end of a session it names (see grantRevocations). */
  async isGrantRevoked(grantId: string): Promise<boolean> {
    return (await this.store.present(grantRevocations(grantId))).includes(true);
  }

  async isSessionEnded(sid: string): Promise<boolean> {
    return (await this.store.get(REVOKED_SESSIONS, sid)) !== undefined;
  }

  async isJwtRevoked(jti: string): Promise<boolean> {
    return (await this.store.get(REVOKED_JWTS, jti)) !== undefined;
  }

  /**
   * A revocation kept until `until` (unix seconds; a later one extends it), resolved once durable.
   * Each call writes unless the store already holds it as long: a repeat while the first write is
   * still in flight writes too and waits for its own commit, so no revocation is answered before
   * it is on record, and one whose write failed is simply made again.
   */
  private async revokeUntil(kind: RecordKind<number, string>, id: string, until: number): Promise<unknown> {
    // On record already: answered once that record is durable too (it may be another call's, just committed).
    if (((await this.store.get(kind, id)) ?? 0) >= until) return this.store.durable(Promise.resolve());
    return this.store.durable(this.store.raiseTo(kind, id, until));
  }

  /** Revokes every token of a grant; `until` (unix seconds) is when the last of them expires. */
  revokeGrant(grantId: string, until: number): Promise<unknown> {
    // A chained grant's own id: its ancestors stay (revoking an exchanged token ends not its subject's).
    return this.revokeUntil(REVOKED_GRANTS, grantChain(grantId)[0]!, until);
  }

  /** Revokes every token issued in a user session (sign-out). */
  revokeSession(sid: string, until: number): Promise<unknown> {
    return this.revokeUntil(REVOKED_SESSIONS, sid, until);
  }

  async revokeJwt(jti: string, exp: number): Promise<void> {
    await this.revokeUntil(REVOKED_JWTS, jti, exp);
  }

  /** Stores an opaque access token; resolves with the token once the record is committed. */
  async issueOpaque(claims: AccessTokenClaims): Promise<string> {
    const token = newOpaqueToken();
    await this.store.durable(this.store.put(TOKENS, sha256(token), claims));
    return token;
  }

  /** The claims (frozen) of an opaque token that exists, has not expired and whose grant or session was not revoked. */
  async findOpaque(token: string): Promise<Readonly<AccessTokenClaims> | undefined> {
    const digest = sha256(token);
    const id = Buffer.from(digest).toString('base64url');
    const known = this.opaqueClaims.get(id);
    if (known) {
      this.opaqueClaims.delete(id);
      if (known.exp * 1000 <= clock.now()) return undefined;
      // Still there (a revoked opaque token is removed), and nothing it came from revoked: one look.
      const [there, ...revoked] = await this.store.present([{ kind: TOKENS, key: digest }, ...originRevocations(known)]);
      if (!there || revoked.includes(true)) return undefined;
      // Back to the newest end: the tokens in use stay.
      this.opaqueClaims.set(id, known);
      return known;
    }
    const stored = await this.store.get(TOKENS, digest);
    if (!stored || stored.exp * 1000 <= clock.now()) return undefined;
    const claims = Object.freeze(stored);
    if ((claims.grantId !== undefined || claims.sid !== undefined) && (await this.isRevokedByOrigin(claims))) return undefined;
    if (this.opaqueClaims.size >= OPAQUE_CLAIMS_KEPT) this.opaqueClaims.delete(this.opaqueClaims.keys().next().value!);
    this.opaqueClaims.set(id, claims);
    return claims;
  }

  /** Removes an opaque token (the caller has checked it exists and who owns it); resolves once durable. */
  async revokeOpaque(token: string): Promise<void> {
    this.opaqueClaims.delete(Buffer.from(sha256(token)).toString('base64url'));
    await this.store.durable(this.store.remove(TOKENS, sha256(token)));
  }

  /** Removes expired opaque tokens, and the revocations whose tokens have all expired (one extended meanwhile stays). */
  async sweep(now = clock.now()): Promise<number> {
    const nowSeconds = Math.floor(now / 1000);
    const counts = await Promise.all([
      this.store.sweep(TOKENS, (claims) => claims.exp <= nowSeconds),
      ...[REVOKED_JWTS, REVOKED_GRANTS, REVOKED_SESSIONS].map((kind) => this.store.sweep(kind, (until) => until <= nowSeconds)),
    ]);
    return counts.reduce((sum, n) => sum + n, 0);
  }
}
