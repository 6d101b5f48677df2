import type { KeysReader } from '../actors/keys.js';
import type { SigningAlg } from '../config.js';
import type { Signer } from '../workers/signer.js';
import { atHash } from '../protocol/at-hash.js';
import { encodedHeader, signingInput, verifiedOwnJwt } from '../protocol/jwt.js';
import { newUniqueId } from '../util/ids.js';
import { clock } from '../util/clock.js';

/**
 * ID tokens (OIDC Core §2): signed by the same keys and signer as JWT access tokens, `typ: JWT`.
 */
export interface IdTokenInput {
  sub: string;
  clientId: string;
  aud: readonly string[];
  authTime: number;
  amr: readonly string[];
  /** Absent for tokens without a login session (JWT profile grant). */
  sid?: string | undefined;
  nonce?: string | undefined;
  /** The access token issued alongside, for `at_hash`. */
  accessToken?: string | undefined;
  /** The app's clock skew (whole seconds): added to `exp`, taken from `iat` and `auth_time`. */
  skewSeconds?: number | undefined;
  /** User claims (profile, email, …, URN claims) to include. */
  userClaims?: Record<string, unknown>;
  /** The app's own ID token lifetime (seconds), else the instance's. */
  lifetimeSeconds?: number | undefined;
  /**
   * The grant the token comes from (its chain, after a token exchange): named in `jti` as an access
   * token's is, so a token exchange that takes the ID token as subject revokes with the grant.
   */
  grantId?: string | undefined;
}

/** The grant an ID token's `jti` names (`<grant>-id_<id>`), if any. */
export function grantOfIdToken(jti: unknown): string | undefined {
  if (typeof jti !== 'string') return undefined;
  const at = jti.indexOf(ID_TOKEN_JTI);
  return at > 0 ? jti.slice(0, at) : undefined;
}

const ID_TOKEN_JTI = '-id_';

/** The claim set; `aud` always holds the client id, first, and `azp` names the client. */
function idTokenClaims(input: IdTokenInput, issuer: string, iat: number, lifetimeSeconds: number, alg: SigningAlg): Record<string, unknown> {
  const aud = [input.clientId, ...input.aud.filter((a) => a !== input.clientId)];
  const claims: Record<string, unknown> = {
    ...input.userClaims,
    iss: issuer,
    sub: input.sub,
    aud,
    azp: input.clientId,
    exp: iat + lifetimeSeconds + (input.skewSeconds ?? 0),
    iat: iat - (input.skewSeconds ?? 0),
    auth_time: input.authTime - (input.skewSeconds ?? 0),
  };
  if (input.grantId !== undefined) claims.jti = `${input.grantId}${ID_TOKEN_JTI}${newUniqueId()}`;
  if (input.sid !== undefined) claims.sid = input.sid;
  if (input.nonce !== undefined) claims.nonce = input.nonce;
  if (input.amr.length > 0) claims.amr = input.amr;
  if (input.accessToken !== undefined) claims.at_hash = atHash(input.accessToken, alg);
  return claims;
}

export class IdTokens {
  constructor(
    private readonly issuer: string,
    private readonly keys: KeysReader,
    private readonly signer: Signer,
    private readonly lifetimeSeconds: number,
  ) {}

  async issue(input: IdTokenInput): Promise<string> {
    const key = this.keys.signingKey();
    const claims = idTokenClaims(input, this.issuer, clock.seconds(), input.lifetimeSeconds ?? this.lifetimeSeconds, key.alg);
    const data = signingInput(encodedHeader(key.alg, key.kid, 'JWT'), claims);
    return `${data}.${await this.signer.sign(key, data)}`;
  }

  /** Claims of an ID token Sesame issued; an expired one is accepted (id_token_hint, end session). */
  verifyHint(token: string): Record<string, unknown> | undefined {
    return verifiedOwnJwt(token, this.issuer, (kid) => this.keys.verificationKey(kid), 'JWT');
  }
}
