import { randomBytes } from 'node:crypto';

/** An opaque token's claims as Sesame stores them for the bench's client (what the store benches write). */
export function tokenClaims(now = Math.floor(Date.now() / 1000)) {
  return {
    jti: randomBytes(16).toString('base64url'),
    sub: '1045316085336768852',
    clientId: 'bench-opaque@sesame.localhost',
    aud: ['1045316085336768999', 'bench-opaque@sesame.localhost'],
    scope: 'urn:zitadel:iam:org:project:id:1045316085336768999:aud',
    iat: now,
    exp: now + 43200,
  };
}
