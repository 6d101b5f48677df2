import type { KeysActor } from '../actors/keys.js';
import type { Signer } from '../workers/signer.js';
import { encodedHeader, signingInput } from '../protocol/jwt.js';
import { INTROSPECTION_JWT_TYP, introspectionJwtClaims } from '../protocol/introspection-jwt.js';
import { clock } from '../util/clock.js';

/**
 * Signs introspection answers as JWTs (RFC 9701) with the instance's signing key, published in
 * the JWKS, header `typ: token-introspection+jwt`.
 */
export class IntrospectionJwts {
  constructor(
    private readonly issuer: string,
    private readonly keys: Pick<KeysActor, 'signingKey'>,
    private readonly signer: Signer,
  ) {}

  async sign(clientId: string, response: Record<string, unknown>): Promise<string> {
    const key = this.keys.signingKey();
    const data = signingInput(encodedHeader(key.alg, key.kid, INTROSPECTION_JWT_TYP), introspectionJwtClaims({ issuer: this.issuer, clientId, iat: clock.seconds(), response }));
    return `${data}.${await this.signer.sign(key, data)}`;
  }
}
