import type { Storage } from '../storage/db.js';
import { sha256 } from '../util/hash.js';
import { newOpaqueToken } from '../util/ids.js';
import { clock } from '../util/clock.js';

/**
 * Owns what is on record about issued access tokens: opaque tokens (stored under the SHA-256 of
 * the token, so a stolen data dir yields no usable token) and every revocation — of a JWT (JWTs
 * themselves are never stored: issuing one writes nothing), of a grant, of a browser session (`sid`).
 * Browser sessions themselves are the user-sessions actor's.
 */
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

const SWEEP_CHUNK = 2000;

export class IssuedTokensActor {
  /** jti → exp (unix seconds) of revoked JWTs; small, so held in memory for introspection. */
  private readonly revokedJwts = new Map<string, number>();
  /**
   * Revoked grants (code/implicit authorizations, refresh families) and ended user sessions, each
   * until the last token it could have issued expires: one Map lookup per user token resolved,
   * none for client_credentials tokens (they carry neither id).
   */
  private readonly revokedGrants = new Map<string, number>();
  private readonly revokedSessions = new Map<string, number>();
  private sweepCursor: Buffer | undefined;

  constructor(
    protected readonly storage: Storage,
    /** False on an HTTP acceptor thread, which reads every revocation from LMDB (IssuedTokensReader). */
    loadRevocations = true,
  ) {
    if (!loadRevocations) return;
    for (const { key, value } of storage.revokedJwts.getRange()) this.revokedJwts.set(key, value);
    for (const { key, value } of storage.stores.revokedGrants.getRange()) this.revokedGrants.set(key, value as number);
    for (const { key, value } of storage.stores.revokedSessions.getRange()) this.revokedSessions.set(key, value as number);
  }

  /** True when the token's grant was revoked or its user session ended. */
  isRevokedByOrigin(claims: AccessTokenClaims): boolean {
    return (claims.grantId !== undefined && this.isGrantRevoked(claims.grantId)) || (claims.sid !== undefined && this.isSessionEnded(claims.sid));
  }

  /**
   * Whether a grant was revoked. A grant made from another (token exchange) names its ancestors
   * after its own id (`TE_1~V2_2`, see grantChain), and the browser sessions of its other parties
   * (`~@V1_3`: an impersonation's actor): it is revoked with any of them, or when one ends.
   */
  isGrantRevoked(grantId: string): boolean {
    if (!grantId.includes(GRANT_CHAIN_SEPARATOR)) return this.hasGrantRevocation(grantId);
    return grantChain(grantId).some((id) => (id.startsWith(SESSION_IN_CHAIN) ? this.isSessionEnded(id.slice(SESSION_IN_CHAIN.length)) : this.hasGrantRevocation(id)));
  }

  /** Whether this one grant id (no chain) has a revocation on record. */
  protected hasGrantRevocation(grantId: string): boolean {
    return this.revokedGrants.has(grantId);
  }

  isSessionEnded(sid: string): boolean {
    return this.revokedSessions.has(sid);
  }

  /*
   * Revocations (of a grant, a session, a JWT) change memory before their write, unlike the rest
   * of this actor: a revoked token stops working at once, also for requests already running while
   * the write commits. Should the write fail, the caller gets the error (its client retries, and
   * no success was answered), and memory keeps the revocation until the process ends: a failure
   * leaves a token refused here, never one accepted that was meant to be revoked. A repeated
   * revocation is answered only once the first one's write is durable (awaited while in flight,
   * made again after a failure): the HTTP acceptor threads read revocations from LMDB, so a
   * success must never come before the record is there.
   */
  private readonly unsettled = new Map<string, Promise<unknown> | 'failed'>();

  /** Writes a revocation record durably, tracked so a repeated revocation waits for it (see above). */
  private recordRevocation(key: string, write: () => Promise<unknown>): Promise<unknown> {
    // A write that throws at once (storage closed) fails like one that fails later: tracked, made again.
    const done: Promise<unknown> = this.storage.durable(Promise.resolve().then(write)).then(
      () => {
        if (this.unsettled.get(key) === done) this.unsettled.delete(key);
      },
      (error: unknown) => {
        if (this.unsettled.get(key) === done) this.unsettled.set(key, 'failed');
        throw error;
      },
    );
    this.unsettled.set(key, done);
    return done;
  }

  /** For a revocation already in memory: its write when settled or in flight, undefined when it failed and must be made again. */
  private alreadyRecorded(key: string): Promise<unknown> | undefined {
    const state = this.unsettled.get(key);
    if (state === undefined) return Promise.resolve();
    return state === 'failed' ? undefined : state;
  }

  /** Revokes every token of a grant; `until` (unix seconds) is when the last of them expires. */
  revokeGrant(grantId: string, until: number): Promise<unknown> {
    // A chained grant's own id: its ancestors stay (revoking an exchanged token ends not its subject's).
    const own = grantChain(grantId)[0]!;
    return this.revokeUntil('grant', this.revokedGrants, this.storage.stores.revokedGrants, own, until);
  }

  /** Revokes every token issued in a user session (sign-out). */
  revokeSession(sid: string, until: number): Promise<unknown> {
    return this.revokeUntil('session', this.revokedSessions, this.storage.stores.revokedSessions, sid, until);
  }

  /** A grant's or a session's revocation, kept until `until` (a later `until` extends it). */
  private revokeUntil(kind: string, revoked: Map<string, number>, db: Storage['stores']['revokedGrants'], id: string, until: number): Promise<unknown> {
    const key = `${kind}:${id}`;
    if ((revoked.get(id) ?? 0) >= until) {
      const recorded = this.alreadyRecorded(key);
      if (recorded) return recorded;
    } else revoked.set(id, until);
    return this.recordRevocation(key, () => db.put(id, revoked.get(id)!));
  }

  /** Stores an opaque access token; resolves with the token once the record is committed. */
  async issueOpaque(claims: AccessTokenClaims): Promise<string> {
    const token = newOpaqueToken();
    await this.storage.durable(this.storage.tokens.put(sha256(token), claims));
    return token;
  }

  /** The claims of an opaque token that exists, has not expired and whose grant or session was not revoked. */
  findOpaque(token: string): AccessTokenClaims | undefined {
    const claims = this.storage.tokens.get(sha256(token)) as AccessTokenClaims | undefined;
    if (!claims || claims.exp * 1000 <= clock.now()) return undefined;
    if ((claims.grantId !== undefined || claims.sid !== undefined) && this.isRevokedByOrigin(claims)) return undefined;
    return claims;
  }

  /** Removes an opaque token (the caller has checked it exists and who owns it); resolves once durable. */
  async revokeOpaque(token: string): Promise<void> {
    await this.storage.durable(this.storage.tokens.remove(sha256(token)));
  }

  isJwtRevoked(jti: string): boolean {
    return this.revokedJwts.has(jti);
  }

  async revokeJwt(jti: string, exp: number): Promise<void> {
    const key = `jwt:${jti}`;
    if (this.revokedJwts.has(jti)) {
      const recorded = this.alreadyRecorded(key);
      if (recorded) {
        await recorded;
        return;
      }
    } else this.revokedJwts.set(jti, exp);
    await this.recordRevocation(key, () => this.storage.revokedJwts.put(jti, exp));
  }

  /**
   * Removes expired opaque tokens and revocations of expired JWTs, a chunk per call so a large
   * store is swept across several ticks without stalling the event loop.
   */
  async sweep(now = clock.now()): Promise<number> {
    const nowSeconds = Math.floor(now / 1000);
    let removed = 0;
    let last: Buffer | undefined;
    let seen = 0;
    const range = this.storage.tokens.getRange(this.sweepCursor ? { start: this.sweepCursor, limit: SWEEP_CHUNK } : { limit: SWEEP_CHUNK });
    const writes: Promise<boolean>[] = [];
    for (const { key, value } of range) {
      seen++;
      last = key;
      if ((value as AccessTokenClaims).exp <= nowSeconds) {
        writes.push(this.storage.tokens.remove(key));
        removed++;
      }
    }
    this.sweepCursor = seen === SWEEP_CHUNK && last ? Buffer.concat([last, Buffer.from([0])]) : undefined;
    for (const [jti, exp] of this.revokedJwts) {
      if (exp <= nowSeconds) {
        this.revokedJwts.delete(jti);
        writes.push(this.storage.revokedJwts.remove(jti));
        removed++;
      }
    }
    for (const [map, db] of [
      [this.revokedGrants, this.storage.stores.revokedGrants],
      [this.revokedSessions, this.storage.stores.revokedSessions],
    ] as const) {
      for (const [id, until] of map) {
        if (until <= nowSeconds) {
          map.delete(id);
          writes.push(db.remove(id));
          removed++;
        }
      }
    }
    await Promise.all(writes);
    return removed;
  }
}
