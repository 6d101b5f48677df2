import type { KeysReader } from '../actors/keys.js';
import type { AccessTokenClaims, ActorClaim, RevokeOutcome, IssuedTokensActor } from '../actors/issued-tokens.js';
import { newUniqueId } from '../util/ids.js';
import type { Signer } from '../workers/signer.js';
import { decodeJws, encodedHeader, isObject, looksLikeJws, signingInput, verifyJws } from '../protocol/jwt.js';
import { clock } from '../util/clock.js';
import { predatesHorizon } from '../domain/revocation-horizon.js';
import type { UserRecord } from '../model/records.js';
import type { View } from '../util/readonly.js';

/**
 * Issues, resolves and revokes access tokens in both formats:
 * - JWT (RFC 9068, `typ: at+jwt`): signed, never stored; revocation stores its jti.
 * - opaque: 256 random bits, stored hashed by the issued-tokens actor before it is handed out.
 */
export type AccessTokenFormat = 'jwt' | 'opaque';

export interface IssuedAccessToken {
  token: string;
  claims: AccessTokenClaims;
  expiresIn: number;
}

export interface ResolvedAccessToken {
  claims: AccessTokenClaims;
  format: AccessTokenFormat;
}

/**
 * JWTs verified recently, kept by their exact text. A resource server introspects the same token
 * on every call it serves, and checking an RS256 signature costs ~30 µs, five times the rest of an
 * introspection (`npm run bench -- --scenarios introspect-jwt`, CPU per request). Only tokens whose
 * header, signature and claims passed go in; a hit counts only while the key that signed it still
 * verifies (a key dropped from the JWKS takes its tokens along); expiry and revocation are checked on
 * every call, cached or not. Bounded: the entry asked about least recently leaves first.
 */
const VERIFIED_JWTS_KEPT = 4096;

/**
 * What a token dies with besides its expiry and its own revocation: the app it was issued to (a
 * user token of an app since removed is no longer valid; RFC 7592 §2.3 asks it of a deleted
 * registered client), and its users — the subject and every actor — whose revocation horizon
 * (domain/revocation-horizon.ts) passed after the token's authentication began.
 */
export interface TokenOrigins {
  appExists(clientId: string): boolean;
  getUser(userId: string): View<UserRecord> | undefined;
}

/** A thread's token origins: its apps and its copy of the directory. */
export function originsIn(clients: { appByClient(clientId: string): unknown }, directory: Pick<TokenOrigins, 'getUser'>): TokenOrigins {
  return { appExists: (clientId) => clients.appByClient(clientId) !== undefined, getUser: (userId) => directory.getUser(userId) };
}

/**
 * True when the subject or one of the actors of a token (or of what tokens come from: a grant, a
 * refresh family, an ID token) is gone, or voided since `authTime` (else `iat`) what it began from,
 * or an actor is not active. (The subject's state is its caller's to check: introspection answers
 * inactive, the grants refuse.)
 */
export function voidedByUsers(directory: Pick<TokenOrigins, 'getUser'>, claims: Pick<AccessTokenClaims, 'sub' | 'act' | 'authTime' | 'iat'>): boolean {
  const began = claims.authTime ?? claims.iat;
  const subject = directory.getUser(claims.sub);
  if (!subject || predatesHorizon(subject, began)) return true;
  for (let actor = claims.act; actor; actor = actor.act) {
    const user = directory.getUser(actor.sub);
    // An actor locked or deactivated (even by wrong passwords, which move no horizon) acts for nobody meanwhile.
    if (user?.state !== 'USER_STATE_ACTIVE' || predatesHorizon(user, began)) return true;
  }
  return false;
}

export class AccessTokens {
  private readonly verifiedJwts = new Map<string, { kid: string; claims: Readonly<AccessTokenClaims> }>();

  constructor(
    private readonly issuer: string,
    private readonly keys: KeysReader,
    private readonly signer: Signer,
    private readonly issuedTokens: IssuedTokensActor,
    private readonly lifetimeSeconds: number,
    /** What a token's validity follows beyond its own record (see TokenOrigins). */
    private readonly origins: TokenOrigins,
  ) {}

  async issue(
    format: AccessTokenFormat,
    input: {
      sub: string;
      clientId: string;
      aud: readonly string[];
      scope: string;
      grantId?: string;
      sid?: string;
      authTime?: number;
      amr?: readonly string[];
      act?: ActorClaim;
      /** Binds the token to a DPoP key (RFC 9449 §6); undefined: a Bearer token. */
      cnf?: { jkt: string } | undefined;
      /** The app's clock skew (whole seconds): added to `exp`, taken from `iat`/`nbf` (ZITADEL). */
      skewSeconds?: number;
      /** The app's own access token lifetime (seconds), else the instance's. */
      lifetimeSeconds?: number;
      /**
       * Claims only a JWT carries (ZITADEL's URN claims, docs/compatibility.md §3.3); an opaque token's holder
       * gets them from introspection, so they are not stored.
       */
      jwtClaims?: Record<string, unknown>;
    },
  ): Promise<IssuedAccessToken> {
    const { skewSeconds = 0, jwtClaims, lifetimeSeconds = this.lifetimeSeconds, cnf, ...fields } = input;
    const now = clock.seconds();
    const iat = now - skewSeconds;
    const expiresIn = lifetimeSeconds + skewSeconds;
    // A user token's id names its grant (as ZITADEL's `V2_<session>-at_<id>`), so a JWT needs no extra claim for it.
    const jti = fields.grantId ? `${fields.grantId}-at_${newUniqueId()}` : newUniqueId();
    const claims: AccessTokenClaims = { jti, ...fields, iat, exp: now + expiresIn };
    if (cnf) claims.cnf = cnf;
    if (format === 'opaque') {
      return { token: await this.issuedTokens.issueOpaque(claims), claims, expiresIn };
    }
    const key = this.keys.signingKey();
    const payload: Record<string, unknown> = {
      ...jwtClaims,
      iss: this.issuer,
      sub: claims.sub,
      aud: claims.aud,
      exp: claims.exp,
      iat,
      nbf: iat,
      jti: claims.jti,
      client_id: claims.clientId,
    };
    if (claims.scope) payload.scope = claims.scope;
    if (claims.sid) payload.sid = claims.sid;
    if (claims.authTime !== undefined) payload.auth_time = claims.authTime;
    if (claims.amr?.length) payload.amr = claims.amr;
    if (claims.act) payload.act = claims.act;
    if (claims.cnf) payload.cnf = claims.cnf;
    const input_ = signingInput(encodedHeader(key.alg, key.kid, 'at+jwt'), payload);
    const signature = await this.signer.sign(key, input_);
    return { token: `${input_}.${signature}`, claims, expiresIn };
  }

  /** The claims of a token Sesame issued that is unexpired and unrevoked, else undefined. */
  async resolve(token: string): Promise<ResolvedAccessToken | undefined> {
    if (!looksLikeJws(token)) {
      const claims = await this.issuedTokens.findOpaque(token);
      if (!claims || (claims.grantId !== undefined && !this.origins.appExists(claims.clientId)) || voidedByUsers(this.origins, claims)) return undefined;
      return { claims, format: 'opaque' };
    }
    const claims = this.verifiedJwtClaims(token);
    if (!claims || claims.exp * 1000 <= clock.now()) return undefined;
    // The jti's revocation and its grant's and session's, in one look (on PostgreSQL one statement).
    if (await this.issuedTokens.isJwtRevokedOrByOrigin(claims)) return undefined;
    if (claims.grantId !== undefined && !this.origins.appExists(claims.clientId)) return undefined;
    if (voidedByUsers(this.origins, claims)) return undefined;
    return { claims, format: 'jwt' };
  }

  /** Revokes a token if `owns` accepts its claims; unknown or invalid tokens are `unknown`. */
  async revoke(token: string, owns: (claims: AccessTokenClaims) => boolean): Promise<RevokeOutcome> {
    if (!looksLikeJws(token)) {
      const claims = await this.issuedTokens.findOpaque(token);
      if (!claims) return 'unknown';
      if (!owns(claims)) return 'foreign';
      await this.issuedTokens.revokeOpaque(token);
      return 'revoked';
    }
    const claims = this.verifiedJwtClaims(token);
    if (!claims || claims.exp * 1000 <= clock.now()) return 'unknown';
    if (!owns(claims)) return 'foreign';
    await this.issuedTokens.revokeJwt(claims.jti, claims.exp);
    return 'revoked';
  }

  private verifiedJwtClaims(token: string): Readonly<AccessTokenClaims> | undefined {
    const known = this.verifiedJwts.get(token);
    if (known) {
      this.verifiedJwts.delete(token);
      if (!this.keys.verificationKey(known.kid)) return undefined;
      // Back to the newest end: the tokens in use stay, those not asked about leave first.
      this.verifiedJwts.set(token, known);
      return known.claims;
    }
    const jws = decodeJws(token);
    if (jws?.header.typ !== 'at+jwt' || typeof jws.header.kid !== 'string') return undefined;
    if (!verifyJws(jws, this.keys.verificationKey(jws.header.kid))) return undefined;
    const claims = this.claimsOf(jws.payload);
    if (!claims) return undefined;
    if (this.verifiedJwts.size >= VERIFIED_JWTS_KEPT) this.verifiedJwts.delete(this.verifiedJwts.keys().next().value!);
    this.verifiedJwts.set(token, { kid: jws.header.kid, claims });
    return claims;
  }

  /** The claims of a verified access token's payload, frozen (they may be handed out again), if it has Sesame's shape. */
  private claimsOf(p: Record<string, unknown>): Readonly<AccessTokenClaims> | undefined {
    if (p.iss !== this.issuer || typeof p.sub !== 'string' || typeof p.jti !== 'string') return undefined;
    if (typeof p.exp !== 'number' || typeof p.iat !== 'number' || typeof p.client_id !== 'string') return undefined;
    const claims: AccessTokenClaims = {
      jti: p.jti,
      sub: p.sub,
      clientId: p.client_id,
      aud: Array.isArray(p.aud) ? p.aud.filter((a): a is string => typeof a === 'string') : typeof p.aud === 'string' ? [p.aud] : [],
      scope: typeof p.scope === 'string' ? p.scope : '',
      iat: p.iat,
      exp: p.exp,
    };
    const at = p.jti.indexOf('-at_');
    if (at > 0) claims.grantId = p.jti.slice(0, at);
    if (typeof p.sid === 'string') claims.sid = p.sid;
    if (isActorClaim(p.act)) claims.act = deepFreeze(p.act);
    if (typeof p.auth_time === 'number') claims.authTime = p.auth_time;
    if (isObject(p.cnf) && typeof p.cnf.jkt === 'string') claims.cnf = Object.freeze({ jkt: p.cnf.jkt });
    if (Array.isArray(p.amr)) claims.amr = Object.freeze(p.amr.filter((a): a is string => typeof a === 'string'));
    Object.freeze(claims.aud);
    return Object.freeze(claims);
  }
}

/** Freezes an actor claim and the actors nested in it (it is handed out again from the cache). */
function deepFreeze(act: ActorClaim): ActorClaim {
  if (act.act) deepFreeze(act.act);
  return Object.freeze(act);
}

function isActorClaim(value: unknown, depth = 0): value is ActorClaim {
  if (depth > 8 || typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.iss === 'string' && typeof v.sub === 'string' && (v.act === undefined || isActorClaim(v.act, depth + 1));
}
