import type { KeysReader } from '../../actors/keys.js';
import type { Signer } from '../../workers/signer.js';
import { encodedHeader, signingInput } from '../../protocol/jwt.js';
import { LOGOUT_TOKEN_TYP, logoutTokenClaims } from '../../protocol/logout-token.js';
import { clock } from '../../util/clock.js';
import { newUniqueId } from '../../util/ids.js';

/**
 * Signs logout tokens with the instance's signing key (the one ID tokens carry, published in the
 * JWKS), header `typ: logout+jwt`. A fresh token, with its own `jti`, for each delivery attempt.
 */
export class LogoutTokens {
  constructor(
    private readonly issuer: string,
    private readonly keys: KeysReader,
    private readonly signer: Signer,
  ) {}

  async sign(clientId: string, sub: string, sid: string): Promise<string> {
    const key = this.keys.signingKey();
    const claims = logoutTokenClaims({ issuer: this.issuer, clientId, sub, sid, iat: clock.seconds(), jti: newUniqueId() });
    const data = signingInput(encodedHeader(key.alg, key.kid, LOGOUT_TOKEN_TYP), claims);
    return `${data}.${await this.signer.sign(key, data)}`;
  }
}
